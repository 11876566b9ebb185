"""A process's exit named for what it waits for: a multiprocessing worker
whose exit joins its Queue's feeder thread, which waits to write into a
pipe the parent reads only after joining the worker.  Alone, the worker
says it is exiting and waits on the parent (exit 4); the tree from the
parent is one deadlock of the two processes (exit 3)."""
import json
import os

import pytest

import harness


def exit_interpreters():
    """Debian's 3.11 and Debian unstable's 3.14 in its root."""
    found = dict(harness.interpreters())
    return [pytest.param(p, id=n) for n, p in sorted(found.items())
            if n == "debian-3.11" or n.startswith("debian-sid-3.14")]


@pytest.mark.parametrize("python", exit_interpreters())
def test_a_workers_exit_joining_its_queues_feeder_waits_on_the_parent_that_reads_after_join(scenario, python):
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "mp_feeder_exit.py")], env=env)
    w = s.truth["worker"]
    status, out, err = harness.pyhang_cli("report", "--json", "-p", w["pid"])
    doc = harness.validated_report(json.loads(out))
    threads = {t["tid"]: t for t in doc["threads"]}
    # THEN the worker's main thread joins the feeder as the process exits, said as such
    main = threads[w["tid"]]["blocked_on"]
    assert main["kind"] == "py-join" and main["owners"] == [w["feeder"]], main
    assert "as this process exits: multiprocessing's exit finalizers join a Queue's feeder thread" in main["detail"]
    # AND the feeder waits in write on the pipe only the parent can read: the worker waits on the parent (4)
    feeder = threads[w["feeder"]]
    assert feeder["blocked_on"]["syscall"]["name"] == "write", feeder["blocked_on"]
    assert (feeder["account"]["state"], feeder["account"]["pids"]) == ("elsewhere", [s.pid]), feeder["account"]
    assert status == doc["exit_status"] == 4 and doc["headline"].startswith("Waits on PID %d: " % s.pid), err
    # AND from the parent, the tree is one deadlock of the two processes, never a second through the exit alone
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    tree = harness.validated_tree(json.loads(out))
    (d,) = tree["deadlocks"]
    assert sorted(set(d["processes"])) == sorted([s.pid, w["pid"]]), d
    assert w["feeder"] in d["threads"] and s.pid in d["threads"], d
    assert status == tree["exit_status"] == 3, err

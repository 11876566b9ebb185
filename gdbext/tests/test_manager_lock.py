"""A multiprocessing SyncManager's Lock taken by a client that was then
killed: the server thread that took it for the client ended, and the server
thread serving the next acquire waits for ever.  pyhang says its holder
most likely exited (holder-exited, likely: another client could hold it),
in the server's own report, live and from a core, and in the tree of the
main process; never that a parent thread held it at fork (the server, a
fork child with a parent thread lost at fork, made the lock after it
started), never spawn advice.  In the same program, a thread waiting to get
from an empty queue.SimpleQueue (a C get, with no frame of queue.py) waits
on that queue, named, not on a bare semaphore.  Debian's 3.11, pyenv's 3.12
and 3.13 (a parking-lot get)."""
import json
import os

import pytest

import harness


def params():
    found = dict(harness.interpreters(today=False))
    names = ["debian-3.11"] + [n for n in sorted(found) if n.startswith(("pyenv-3.12", "pyenv-3.13"))]
    return [pytest.param(found[n], id=n) for n in names if n in found]


@pytest.fixture(scope="module", params=params())
def program(request):
    exe, env = harness.stripped_interpreter(request.param)
    s = harness.Scenario([exe, "-u", os.path.join(harness.SCENARIOS, "manager_lock.py"), "simplequeue"], env=env)
    s.start()
    s.exe = exe
    yield s
    s.stop()


def report(*target):
    status, out, err = harness.pyhang_cli("report", "--json", *target)
    return status, harness.validated_report(json.loads(out)), err


def check_holder_exited(where, status, doc, truth):
    (waiter,) = truth["server_blocked"]
    b = {t["tid"]: t for t in doc["threads"]}[waiter]["blocked_on"]
    assert (b["kind"], b["address"], b["owners"]) == ("py-lock", truth["lock"], []), (where, b)
    (v,) = [v for v in doc["verdicts"] if v["kind"] == "holder-exited"]
    assert v["threads"] == [waiter] and v["facts"]["address"] == truth["lock"], (where, v)
    assert (v["facts"]["evidence"], v["facts"]["confidence"]) == ("manager-client", "likely"), (where, v)
    assert v["facts"]["frame"]["function"].endswith("serve_client") and "[likely" in v["text"], (where, v)
    assert "client" in v["advice"] and "spawn" not in v["advice"], (where, v)
    # never the orphaned-at-fork claim (the server made the lock after fork), never "owner unknown" for it
    assert not [h for h in doc["fork_hazards"] if h["kind"] == "orphaned-lock"], (where, doc["fork_hazards"])
    assert waiter not in [t for v in doc["verdicts"] if v["kind"] == "owners-unknown" for t in v["threads"]], where
    assert not any("spawn" in (h["advice"] or "") for h in doc["fork_hazards"] if h["kind"] == "orphaned-lock")
    assert status == doc["exit_status"] == 5, where
    assert "a lock's holder most likely exited" in doc["headline"], (where, doc["headline"])


def test_a_managers_lock_whose_client_was_killed_holding_it_has_an_exited_holder(program):
    t = program.truth
    check_holder_exited("live", *report("-p", t["server"])[:2], t)
    core = harness.gcore(t["server"], program.tmp)
    check_holder_exited("core", *report(core, program.exe)[:2], t)


def test_the_tree_says_the_servers_lock_holder_exited_and_claims_no_lock_copied_at_fork(program):
    t = program.truth
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", program.pid)
    doc = harness.validated_tree(json.loads(out))
    (server,) = [p for p in doc["processes"] if p.get("target", {}).get("pid") == t["server"]]
    assert [v["threads"] for v in server["verdicts"] if v["kind"] == "holder-exited"] == [t["server_blocked"]]
    assert not [h for h in doc["fork_hazards"] if h["kind"] == "orphaned-lock"], doc["fork_hazards"]
    assert status == doc["exit_status"] == 5, err


def test_a_get_on_an_empty_simplequeue_names_the_queue(program):
    getter = harness.role_tid(program, "simplequeue-getter")
    for where, target in (("live", ["-p", program.pid]), ("core", [program.gcore(), program.exe])):
        _, doc, _ = report(*target)
        b = {t["tid"]: t for t in doc["threads"]}[getter]["blocked_on"]
        assert (b["kind"], b["address"], b["confidence"]) == ("py-queue-get", program.truth["queue"], "certain"), \
            (where, b)
        assert b["name"] == "__main__.QUEUE", (where, b)
        assert "waits to get from queue.SimpleQueue 0x%x (__main__.QUEUE)" % program.truth["queue"] in b["detail"], \
            (where, b["detail"])
        # a get any thread may end by a put: an idle wait, not one of unknown owner
        assert getter not in [t for v in doc["verdicts"] if v["kind"] == "owners-unknown" for t in v["threads"]]

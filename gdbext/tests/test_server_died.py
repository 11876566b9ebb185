"""A child that died explains the wait on what it served, live: a
DataLoader-style parent reading its result pipe while the worker that was
to write its result was killed (a zombie, not reaped) and the live workers,
which hold the pipe's write end too, wait for their next index.  The tree
gives the zombie's death as a fact (its signal, in JSON and text) and says
the parent hangs (server-died, exit status 5) naming the dead worker and
the pipe; it says nothing such while a live worker's wait ends by itself
(testdata/scenarios/loader_worker_killed.py).  The cores `pyhang gcore
--tree` writes give the live tree's answer: the parent's record of /proc
names the zombie (which gets no core) and its wait status.  On Debian's 3.11
and on unstable's 3.14 in its root."""
import json
import os
import sys

import pytest

import harness

sys.path[0:0] = [os.path.join(harness.build_dir(), "python"), os.path.join(harness.ROOT, "python")]
from pyhang.analysis.syscall_names import NAMES  # noqa: E402

PY = "/usr/bin/python3.11"
NUMBERS = {name: nr for nr, name in NAMES.items()}


def start(scenario, mode, python=PY):
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "loader_worker_killed.py"), mode])
    harness.wait_processes_parked([w["pid"] for w in s.truth["workers"]] + [s.pid], calls={s.pid: NUMBERS["read"]})
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    doc = harness.validated_tree(json.loads(out))
    assert doc["exit_status"] == status, err
    return s, status, doc


def recorded_tree(s, python, directory):
    """(exit status, tree) of the cores `pyhang gcore --tree` writes of the scenario's processes (none of the
    zombie's)."""
    status, out, err = harness.pyhang_cli("gcore", "--tree", "-p", s.pid, "-o", os.path.join(directory, "core"))
    assert status == 0 and "no core of process %d: a zombie" % s.truth["killed"] in err, (out, err)
    cores = [os.path.join(directory, "core.%d" % pid) for pid in [s.pid] + [w["pid"] for w in s.truth["workers"]]]
    status, out, err = harness.pyhang_cli("report", "--json", *harness.core_options(python), *cores)
    doc = harness.validated_tree(json.loads(out))
    assert doc["exit_status"] == status, err
    return status, doc


def zombie_of(doc, pid):
    (p,) = [p for p in doc["processes"] if p.get("pid") == pid and "target" not in p]
    return p


def check_killed(s, status, doc):
    killed, signal = s.truth["killed"], s.truth["signal"]
    # THEN the killed worker is in the tree as dead: its signal, read from its stat
    z = zombie_of(doc, killed)
    assert z["parent_pid"] == s.pid and z["exit"]["signal"] == signal and z["exit"]["signal_name"] == "SIGKILL"
    assert z["exit"]["status"] is None
    # AND the parent's read of the result pipe is a hang naming it, likely; no deadlock
    assert doc["deadlocks"] == []
    (v,) = [v for v in doc["verdicts"] if v["kind"] == "server-died"]
    main = harness.role_tid(s, "main")
    assert (v["pid"], v["threads"]) == (s.pid, [main]) and v["facts"]["confidence"] == "likely"
    (w,) = v["facts"]["waits"]
    live = sorted(x["pid"] for x in s.truth["workers"])
    assert (w["tid"], w["link"], w["dead"]) == (main, s.truth["result_link"], [killed])
    assert w["holders"] == sorted([s.pid] + live)
    (d,) = v["facts"]["dead"]
    assert (d["pid"], d["signal"], d["evidence"], d["siblings"]) == (killed, signal, "siblings-hold", live)
    assert status == 5 and doc["headline"] == ("Hung without a deadlock: in PID %d a process that would have served "
                                               "a wait died." % s.pid)


@pytest.mark.parametrize("python", harness.interpreter_params_of())
def test_a_parent_waiting_on_the_result_pipe_of_a_killed_worker_is_hung_naming_the_dead_worker(scenario, python,
                                                                                                tmp_path):
    s, status, doc = start(scenario, "killed", python)
    killed, signal = s.truth["killed"], s.truth["signal"]
    main = harness.role_tid(s, "main")
    check_killed(s, status, doc)
    # AND the text says the death where it lists the processes, and the verdict first
    _, text, _ = harness.pyhang_cli("report", "--tree", "-p", s.pid)
    assert "PID %d (loader-worker): killed by signal %d (SIGKILL), and its parent has not reaped it (a zombie)" % (
        killed, signal) in text
    assert "Server died: in PID %d Thread 1 (LWP %d) waits in read on %s" % (s.pid, main, s.truth["result_link"]) \
        in text.splitlines()[4], text
    # AND from the cores pyhang gcore --tree writes, the same: the zombie from the parent's record, the same hang
    check_killed(s, *recorded_tree(s, python, str(tmp_path)))
    # AND from the parent's core gdb writes (no fd table, no children): the read is not accounted for, never 0
    status, core = harness.report_doc(*harness.core_options(python), s.gcore(), python)
    t = next(t for t in core["threads"] if t["tid"] == main)
    assert (t["account"]["state"], t["account"]["reason"], status) == ("unaccounted", "no-fd-table", 4), t["account"]


def test_no_dead_server_is_said_while_a_live_holder_of_the_pipe_only_sleeps(scenario, tmp_path):
    s, live_status, live = start(scenario, "sleeper")
    # live, and from the cores pyhang gcore --tree writes (whose parent's record names the zombie)
    for where, (status, doc) in (("live", (live_status, live)), ("cores", recorded_tree(s, PY, str(tmp_path)))):
        # the killed worker is still dead, said so
        assert zombie_of(doc, s.truth["killed"])["exit"]["signal"] == s.truth["signal"], where
        # but the sleeping worker holds the result pipe's write end and will wake: no hang is claimed for it
        assert [v for v in doc["verdicts"] if v["kind"] == "server-died"] == [] and doc["deadlocks"] == [], where
        assert status != 5, (where, doc["headline"])
        # AND yet the wait a dead worker would have served is no all-clear: not accounted for (4)
        assert {"pid": s.pid, "tid": harness.role_tid(s, "main")} in doc["unaccounted"] and status == 4, \
            (where, doc["headline"])

"""The exit status says what the report concluded, the same number as the
JSON's exit_status: 0 nothing hung, 3 a deadlock, 5 a hang that is no
cycle (here: a ThreadPoolExecutor starving itself, a Queue nothing can
fill), live and from a core; and for --tree over the whole tree; 4 for one
side of a cross-process wait alone; 2 for a target that runs no Python."""
import json
import os
import subprocess

import harness

PY = "/usr/bin/python3.11"


def status_and_doc(*args):
    status, out, err = harness.pyhang_cli("report", "--json", *args)
    doc = json.loads(out)
    assert doc["exit_status"] == status, err
    return status


def test_a_pool_starving_itself_is_a_hang_without_a_cycle_live_and_from_a_core(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "py_objects.py")])
    assert status_and_doc("-p", s.pid) == 5
    assert status_and_doc(s.gcore(), PY) == 5


def test_a_lock_cycle_is_a_deadlock_and_a_process_asleep_is_nothing_hung(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py")])
    assert status_and_doc("-p", s.pid) == 3
    sleeper = subprocess.Popen([PY, "-c", "import time; print('READY', flush=True); time.sleep(600)"],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert sleeper.stdout.readline().strip() == "READY"
        harness.wait_processes_parked([sleeper.pid])
        assert status_and_doc("-p", sleeper.pid) == 0
    finally:
        sleeper.kill()
        sleeper.wait()


def test_the_tree_of_a_pipe_cycle_is_a_deadlock(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "pipe_stderr.py")], env={"PYTHONUNBUFFERED": "1"})
    assert status_and_doc("--tree", "-p", s.pid) == 3


def test_one_side_of_a_pipe_cycle_is_incomplete_never_an_all_clear(scenario):
    # the parent (stopped) and the child (read without stopping it: it is inside a write) each wait on
    # the other: alone, each report says whether that ends is up to a process it did not look at
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "pipe_stderr.py")], env={"PYTHONUNBUFFERED": "1"})
    assert status_and_doc("-p", s.pid) == 4
    assert status_and_doc("-p", s.truth["child"]) == 4


def test_a_blocked_event_loop_is_a_hang_without_a_cycle(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "loop_blocked.py")])
    status, out, _ = harness.pyhang_cli("report", "--json", "-p", s.pid)
    doc = json.loads(out)
    assert [v["threads"] for v in doc["verdicts"] if v["kind"] == "asyncio-loop-blocked"] == \
        [[harness.role_tid(s, "loop")]], doc["verdicts"]
    assert status == doc["exit_status"] == 5 and not doc["deadlocks"]
    assert doc["headline"] == "Hung without a deadlock: an asyncio event loop is blocked."
    assert status_and_doc(s.gcore(), PY) == 5


def test_a_lock_copied_locked_by_fork_is_a_hang_in_the_child_alone_and_across_the_tree(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "fork_pool_lock.py")])
    child = s.truth["workers"][0]["pid"]
    assert status_and_doc("-p", child) == 5
    # and the child's own report says what the look at its parent adds, and does not also call the
    # lock's owner unknown: the hazard explains it
    doc = json.loads(harness.pyhang_cli("report", "--json", "-p", child)[1])
    (h,) = [h for h in doc["fork_hazards"] if h["kind"] == "orphaned-lock"]
    assert h["advice"].endswith("`pyhang report --tree -p %d` asks the parent which of its threads held it" % s.pid)
    assert not [v for v in doc["verdicts"] if v["kind"] == "owners-unknown"], doc["verdicts"]
    assert status_and_doc("--tree", "-p", s.pid) == 5


def test_a_program_that_runs_no_python_is_no_all_clear(scenario):
    s = scenario([harness.fixture_path("prog_parked"), "2"])
    assert status_and_doc("-p", s.pid) == 2
    assert status_and_doc(s.gcore()) == 2


def test_an_all_clear_says_the_children_it_did_not_look_at(scenario):
    # GIVEN a parent asleep whose fork child is asleep too (any child: the parent's report does not look at it)
    code = ("import os, time\nchild = os.fork()\nif child == 0:\n    time.sleep(600)\n    os._exit(0)\n"
            "print('READY', child, flush=True)\ntime.sleep(600)\n")
    parent = subprocess.Popen([PY, "-c", code], stdout=subprocess.PIPE, text=True)
    child = None
    try:
        ready, child = parent.stdout.readline().split()
        assert ready == "READY"
        harness.wait_processes_parked([parent.pid, int(child)])
        # THEN the parent's own report is the all-clear (exit 0), and it names the child it did not look at
        status, out, err = harness.pyhang_cli("report", "--json", "--once", "-p", parent.pid)
        doc = harness.validated_report(json.loads(out))
        assert status == doc["exit_status"] == 0 and doc["children"] == [int(child)], (doc["headline"], err)
        text = harness.pyhang_cli("report", "--once", "-p", parent.pid)[1]
        assert ("Its children are not in this report: PID %s; `pyhang report --tree -p %d` looks at them too"
                % (child, parent.pid)) in text, text[:1000]
    finally:
        parent.kill()
        parent.wait()
        if child is not None and int(child) > 0:
            try:
                os.kill(int(child), 9)
            except OSError:
                pass

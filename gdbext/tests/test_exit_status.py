"""The exit status says what the report concluded, the same number as the
JSON's exit_status: 0 nothing hung, 3 a deadlock, 5 a hang that is no
cycle (here: a ThreadPoolExecutor starving itself, a Queue nothing can
fill), live and from a core; and for --tree over the whole tree."""
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

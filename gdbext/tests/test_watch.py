"""`pyhang watch -p PID` on real processes, never stopping them: a deadlock
gets its report (the one `pyhang report --no-stop` makes) once the process
stood still, with the report's exit status; a process whose threads all wait
with timeouts (idle by design) gets one report that lets the watch go on,
and is never stopped (no timed wait resumed through restart_syscall, as
after a stop); a process that ends ends the watch with 0."""
import json
import os
import subprocess
import sys

import pytest

import harness

RESTART_SYSCALL = 219


def params():
    found = dict(harness.interpreters())
    return [pytest.param(found[n], id=n) for n in harness.DEBIAN_AND_SID if n in found]


@pytest.mark.parametrize("python", params())
def test_a_deadlock_gets_its_report_and_exit_status_once_the_process_stood_still(scenario, python):
    # GIVEN two threads deadlocked on two threading.RLock objects (they record their owners)
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"], env=env)
    waiters = sorted(x["tid"] for x in s.truth["threads"] if x["role"] != "main")
    # WHEN it is watched ten times a second, its report due after one second still
    status, out, err = harness.pyhang_cli("watch", "--json", "--interval", "0.1", "--after", "1", "-p", s.pid,
                                          timeout=120)
    assert "Traceback" not in err, err
    # THEN the watch ends with the report's own status and document: the certain cycle of the two threads
    doc = harness.validated_report(json.loads(out))
    assert status == doc["exit_status"] == 3, err
    (d,) = doc["deadlocks"]
    assert d["confidence"] == "certain" and sorted(d["threads"]) == waiters, d
    # AND the report is one of a process it did not stop; stderr says what the watch did
    assert doc["target"]["kind"] == "live"
    assert any(w.startswith("taken without stopping the process") for w in doc["warnings"]), doc["warnings"]
    assert "its report (exit status 3)" in err and err.startswith("pyhang: watching process %d" % s.pid), err


def test_an_idle_process_gets_one_report_that_lets_the_watch_go_on_and_is_never_stopped(scenario):
    # GIVEN every thread waits with a timeout (Lock, Condition, Event, poll, sleep): idle by design
    exe, env = harness.stripped_interpreter("/usr/bin/python3.11")
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "timed_waits.py")], env=env)
    # WHEN it is watched for three seconds, its report due after one second still
    status, out, err = harness.pyhang_cli("watch", "--interval", "0.1", "--after", "1", "--for", "3", "-p", s.pid,
                                          timeout=120)
    # THEN one report, which accounted for every thread and let the watch go on, and nothing on stdout
    assert (status, out) == (0, ""), err
    assert err.count("watching on") == 1, err
    assert "1 report): no report named a problem" in err, err
    # AND no timed wait was interrupted: a stop would have left them resumed through restart_syscall
    for role in ("lock-timed", "poll-timed"):
        assert harness.thread_syscall(s.pid, harness.role_tid(s, role)) != RESTART_SYSCALL, role


def test_a_process_that_ends_ends_the_watch_with_0():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
    try:
        status, out, err = harness.pyhang_cli("watch", "--interval", "0.1", "-p", child.pid, timeout=120)
    finally:
        child.kill()
        child.wait()
    assert (status, out) == (0, ""), err
    assert "pyhang: process %d ended; watched" % child.pid in err and "0 reports" in err, err


def test_a_process_that_is_not_there_is_a_failure_said_on_stderr():
    status, out, err = harness.pyhang_cli("watch", "-p", "999999", timeout=120)
    assert status == 1 and "no process 999999" in err, err

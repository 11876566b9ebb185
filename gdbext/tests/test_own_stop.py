"""The command line's own stop of a live process (pyhang.stopped, its default for `report -p`): it finds
what gdb's stop finds, sends the process no signal, and lets every thread run on untraced before it
prints; a process another debugger traces is refused, naming that debugger, and --no-stop still reads it."""
import os
import signal
import subprocess
import sys
import time

import harness

PY = "/usr/bin/python3.11"

# A process of its own that traces `argv[1]` (PTRACE_SEIZE: it neither stops nor signals it), says so on
# stdout and waits to be killed: another debugger, as pyhang sees one.
_TRACER = r"""
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE = 0x4206
ok = libc.ptrace(PTRACE_SEIZE, int(sys.argv[1]), None, None) == 0
print("traced" if ok else "refused %d" % ctypes.get_errno(), flush=True)
time.sleep(3600)
"""


def _status_field(pid, name):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split(":", 1)[1].strip()
    return None


def test_the_command_lines_own_stop_finds_the_deadlock_and_leaves_the_process_running_untraced(scenario):
    # GIVEN two threads deadlocked on two RLocks, which record their owners
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"])
    # WHEN the command line reports it, stopping it itself (no --gdb)
    status, doc = harness.report_doc("-p", s.pid)
    # THEN the deadlock is the scenario's, each thread holding the lock the other waits for
    assert status == 3 and len(doc["deadlocks"]) == 1, doc["deadlocks"]
    by_tid = {t["tid"]: t for t in doc["threads"]}
    assert sorted(by_tid) == sorted(t["tid"] for t in s.truth["threads"])
    waits = {by_tid[harness.role_tid(s, role)]["blocked_on"]["address"]
             for role in ("holds-a-wants-b", "holds-b-wants-a")}
    assert waits == {s.truth["a"], s.truth["b"]}, waits
    # AND it is the report gdb's stop gives, thread for thread
    _, by_gdb = harness.report_doc("--gdb", "-p", s.pid)
    assert [(t["tid"], t["blocked_on"]["kind"] if t["blocked_on"] else None, [f["function"] for f in t["python_frames"]])
            for t in doc["threads"]] == \
           [(t["tid"], t["blocked_on"]["kind"] if t["blocked_on"] else None, [f["function"] for f in t["python_frames"]])
            for t in by_gdb["threads"]]
    assert doc["deadlocks"] == by_gdb["deadlocks"]
    # AND afterwards no thread is stopped or traced, and no signal waits for the process
    for tid in by_tid:
        assert harness.thread_state(s.pid, tid) in ("S", "R"), (tid, harness.thread_state(s.pid, tid))
    assert _status_field(s.pid, "TracerPid") == "0"
    assert int(_status_field(s.pid, "ShdPnd"), 16) == 0 and int(_status_field(s.pid, "SigPnd"), 16) == 0


def test_the_command_lines_own_stop_refuses_a_process_another_debugger_traces_and_names_it(scenario):
    # GIVEN a deadlocked process that another process traces
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"])
    tracer = subprocess.Popen([sys.executable, "-c", _TRACER, str(s.pid)], stdout=subprocess.PIPE, text=True)
    try:
        said = tracer.stdout.readline().strip()
        assert said == "traced", said
        # WHEN the command line is asked for its report
        status, out, err = harness.pyhang_cli("report", "-p", s.pid)
        # THEN it fails in one line naming the tracer, and says how to read it anyway
        assert status == 1 and out == "" and "Traceback" not in err, err
        first = err.splitlines()[0]
        assert first.startswith("pyhang: process %d is traced by process %d (" % (s.pid, tracer.pid)), first
        assert "pyhang report --no-stop -p %d" % s.pid in err
        # AND the tracer still holds it: nothing of its trace was taken
        assert _status_field(s.pid, "TracerPid") == str(tracer.pid)
        # AND --no-stop reads it all the same
        status, doc = harness.report_doc("--no-stop", "-p", s.pid)
        assert status == 3 and len(doc["deadlocks"]) == 1
    finally:
        tracer.send_signal(signal.SIGKILL)
        tracer.wait()
    time.sleep(0.1)
    assert _status_field(s.pid, "TracerPid") == "0"


def test_the_command_lines_own_stop_says_a_zombie_is_one_and_no_process_is_none():
    # GIVEN a process that exited and that its parent (this test) has not reaped
    pid, parent, end = harness.child_left_unreaped(["sleep", "1000"])
    try:
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while harness.thread_state(pid, pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        # WHEN the command line is asked for its report
        status, out, err = harness.pyhang_cli("report", "-p", pid)
    finally:
        end()
    # THEN it says in one line that the process is a zombie, no permission hint, no gdb
    assert status == 1 and out == "" and "Traceback" not in err, err
    assert err.splitlines()[0] == ("pyhang: process %d has exited: it is a zombie, which its parent (PID %d) has not "
                                   "reaped, and holds no threads or memory to read" % (pid, parent)), err
    assert "ptrace_scope" not in err and "gdb" not in err, err
    # AND once reaped there is no such process, and it says what to check
    status, out, err = harness.pyhang_cli("report", "-p", pid)
    assert status == 1 and err.splitlines()[0] == "pyhang: there is no process %d" % pid, err


def test_a_thread_no_stop_reaches_is_named_read_from_proc_and_never_counted_as_running(scenario):
    # GIVEN a process one of whose threads waits in vfork for a child that sleeps an hour (no ptrace stop
    # reaches a vfork parent: gdb's attach waits for it for ever)
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "vfork_wait.py"), harness.fixture_path("libforkfixture.so")])
    waiting = harness.role_tid(s, "in-vfork")
    # WHEN the command line reports it, stopping it itself
    status, doc = harness.report_doc("-p", s.pid)
    # THEN the stop went on without that thread and says so; what it waits in comes from its /proc record, and
    # which child from its task's children
    by_tid = {t["tid"]: t for t in doc["threads"]}
    stuck = by_tid[waiting]
    assert "did not stop within 2000 ms" in stuck["problem"], stuck["problem"]
    assert stuck["blocked_on"]["syscall"]["name"] == "vfork", stuck["blocked_on"]
    assert [f["function"] for f in stuck["python_frames"]][:1] == ["in_vfork"], stuck["python_frames"]
    # AND it is no all-clear: a wait on its child, the process it made (exit 4: this report does not look at it),
    # not a running thread
    assert stuck["blocked_on"]["syscall"]["child"] == s.truth["child"], stuck["blocked_on"]
    account = stuck["account"]
    assert status == 4 and (account["state"], account["finding"], account["pids"]) == (
        "elsewhere", "waits-on-process", [s.truth["child"]]), account
    assert by_tid[s.pid]["account"]["state"] == "idle" and by_tid[s.pid]["problem"] is None
    # AND no thread of it is taken for one fork did not copy (the thread is known by its struct pthread)
    assert not doc.get("fork_hazards"), doc.get("fork_hazards")
    # AND once the command line has exited nothing traces the process
    assert _status_field(s.pid, "TracerPid") == "0"
    # AND a core the kernel writes of it says the same wait, its child not known there (no /proc), never an
    # all-clear
    core = s.kernel_core()
    assert core is not None, "kernel.core_pattern pipes cores to a handler here"
    status, from_core = harness.report_doc(core, PY)
    stuck = {t["tid"]: t for t in from_core["threads"]}[waiting]
    assert stuck["blocked_on"]["syscall"]["name"] == "vfork" and stuck["blocked_on"]["syscall"]["child"] is None
    assert status == 4 and stuck["account"]["state"] == "elsewhere", stuck["account"]


def test_gdbs_paths_refuse_in_one_line_a_process_whose_thread_waits_in_vfork_rather_than_wait_with_it(scenario):
    # GIVEN a process one of whose threads waits in vfork (gdb's attach would wait for it as long)
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "vfork_wait.py"), harness.fixture_path("libforkfixture.so")])
    waiting = harness.role_tid(s, "in-vfork")
    said = ("gdb cannot stop process %d: thread LWP %d waits in vfork for a child to exec or exit, where no stop "
            "reaches, and gdb's attach would wait for it as long" % (s.pid, waiting))
    # WHEN it is asked for through gdb, a report and a core
    status, out, err = harness.pyhang_cli("report", "--gdb", "-p", s.pid, timeout=60)
    # THEN each says so in one line (and how to read it anyway), at once, and nothing traces the process after
    assert status == 1 and err.splitlines()[0] == "pyhang: " + said, err
    assert "pyhang report -p %d (without --gdb)" % s.pid in err
    status, out, err = harness.pyhang_cli("gcore", "-p", s.pid, "-o", os.path.join(s.tmp, "core"), timeout=60)
    assert status == 1 and said in err, err
    assert _status_field(s.pid, "TracerPid") == "0"

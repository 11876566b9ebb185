"""Looking must not change the hang: `pyhang report --no-stop` reads a live
process without stopping it (no gdb, no ptrace), and by default the command
line does not stop a process one of whose threads is inside a write on a
pipe or socket (a stop would cut it short and the program would lose the
rest).  Checked on the classic subprocess deadlock, and against the report
gdb makes of the same parked threads."""
import json
import os
import time

import pytest

import harness

PY = "/usr/bin/python3.11"


def syscall_record(pid):
    with open("/proc/%d/syscall" % pid) as f:
        return f.read().split()


def written(pid):
    """Bytes the process has written so far (/proc/PID/io wchar)."""
    with open("/proc/%d/io" % pid) as f:
        return int(next(l for l in f if l.startswith("wchar:")).split()[1])


def tracer(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(next(l for l in f if l.startswith("TracerPid:")).split()[1])


def wait_parked_in_write(pid, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if syscall_record(pid)[0] == "1":
            return
        time.sleep(0.05)
    raise AssertionError("the child never blocked in write: %s" % syscall_record(pid))


@pytest.fixture
def pipe_hang(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "pipe_stderr.py")], env={"PYTHONUNBUFFERED": "1"})
    wait_parked_in_write(s.truth["child"])
    return s


def test_the_subprocess_pipe_hang_survives_five_no_stop_reports_and_five_default_ones(pipe_hang):
    s = pipe_hang
    child = s.truth["child"]
    before = (syscall_record(child), written(child))
    assert before[0][0] == "1" and int(before[0][1], 16) == 2 and int(before[0][3], 16) == s.truth["size"]
    for _ in range(5):
        status, out, err = harness.pyhang_cli("report", "--no-stop", "--json", "-p", child)
        assert status == 0, err
        assert tracer(child) == 0
    for _ in range(5):
        # the default: the command line sees the write on a pipe and does not stop the child
        status, out, err = harness.pyhang_cli("report", "--json", "-p", child)
        assert status == 0, err
    report = harness.validated_report(json.loads(out))
    # THEN the child still sleeps in the same write, having written not a byte more or less
    assert (syscall_record(child), written(child)) == before
    assert os.path.exists("/proc/%d" % s.pid) and syscall_record(s.pid)[0] == "0"  # the parent still reads
    # AND the report says it did not stop the child, and why, and what the write waits for
    assert any(w.startswith("taken without stopping the process") for w in report["warnings"])
    assert any("inside write on fd 2 (pipe:" in w for w in report["warnings"]), report["warnings"]
    (thread,) = report["threads"]
    b = thread["blocked_on"]
    assert b["kind"] == "syscall" and b["syscall"]["name"] == "write" and b["syscall"]["fd"] == 2
    (holder,) = b["syscall"]["object"]["holders"]
    assert holder["pid"] == s.pid and holder["fds"] == [s.truth["stderr_fd"]]


def test_py_bt_and_lock_owner_read_such_a_process_without_stopping_it_and_the_others_refuse(pipe_hang):
    child = pipe_hang.truth["child"]
    before = (syscall_record(child), written(child))
    status, out, err = harness.pyhang_cli("py-bt", "-p", child)
    assert status == 0 and 'File "<string>", line 1, in <module>' in out, (out, err)
    assert "not stopped because LWP %d is inside write on fd 2" % child in out
    status, out, err = harness.pyhang_cli("lock-owner", "-p", child)
    assert status == 0 and "waits in write on fd 2" in out and "held only by PID %d" % pipe_hang.pid in out, out
    status, out, err = harness.pyhang_cli("gil-holder", "-p", child)
    assert status == 1 and "would cut short a transfer" in err and "--stop" in err, err
    assert (syscall_record(child), written(child)) == before


def no_stop_interpreters():
    """Debian's 3.11, pyenv's 3.8 and 3.13 (stripped), and today's Debian interpreters, when present."""
    chosen = []
    for name, path in harness.interpreters():
        if name == "debian-3.11" or name.startswith(("pyenv-3.8.", "pyenv-3.13.", "debian-sid-", "debian-trixie-")):
            chosen.append(pytest.param(path, id=name))
    return chosen


def blocked_facts(report):
    """What each thread waits on, as the analysis said it, keyed by TID."""
    out = {}
    for t in report["threads"]:
        b = t["blocked_on"]
        if b is not None:
            out[t["tid"]] = (b["kind"], b["address"], sorted(b["owners"]), b["owner_source"],
                             (b.get("syscall") or {}).get("name"))
    return out


@pytest.mark.parametrize("python", no_stop_interpreters())
@pytest.mark.parametrize("script", ["py_locks.py", "lock_abba.py", "syscall_waits.py"])
def test_parked_threads_read_without_stopping_give_the_facts_gdb_gives(scenario, python, script):
    # GIVEN a program whose threads are all parked
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, script)], env=env)
    # WHEN it is read without stopping it, and then by gdb
    status, out, err = harness.pyhang_cli("report", "--no-stop", "--json", "-p", s.pid)
    assert status in (0, 3), err
    quiet = harness.validated_report(json.loads(out))
    stopped = harness.report_json(pid=s.pid)
    # THEN the same waits, owners and deadlocks, and the same Python stacks
    assert blocked_facts(quiet) == blocked_facts(stopped)
    assert sorted(sorted(d["threads"]) for d in quiet["deadlocks"]) == \
        sorted(sorted(d["threads"]) for d in stopped["deadlocks"])
    stacks = {t["tid"]: [(f["function"], f["line"]) for f in t["python_frames"]] for t in stopped["threads"]}
    assert {t["tid"]: [(f["function"], f["line"]) for f in t["python_frames"]] for t in quiet["threads"]} == stacks
    assert tracer(s.pid) == 0


@pytest.mark.parametrize("flags", [pytest.param([], id="default"), pytest.param(["--no-stop"], id="no-stop")])
def test_the_tree_finds_the_pipe_deadlock_and_leaves_the_childs_write_whole(pipe_hang, flags):
    s = pipe_hang
    child = s.truth["child"]
    before = (syscall_record(child), written(child))
    # WHEN the parent's tree is reported (by default the parent, which reads, is stopped; the child is not)
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid, *flags)
    tree = harness.validated_tree(json.loads(out))
    # THEN the deadlock across the two processes, both examined, and the child's write untouched
    assert status == 3, err
    assert {p["target"]["pid"] for p in tree["processes"] if "schema" in p} == {s.pid, child}
    (d,) = tree["deadlocks"]
    assert sorted(d["processes"]) == sorted([s.pid, child])
    assert (syscall_record(child), written(child)) == before
    assert syscall_record(s.pid)[0] == "0"


def test_threads_that_run_are_running_never_a_wait_or_a_holder_seen_at_one_moment(scenario):
    # GIVEN four threads spinning in Python, passing the GIL between them, and a main thread asleep
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "gil_contention.py"), "4"])
    spinners = {t["tid"] for t in s.truth["threads"] if t["role"] == "spinner"}
    for _ in range(5):
        status, out, err = harness.pyhang_cli("report", "--no-stop", "--json", "-p", s.pid)
        report = harness.validated_report(json.loads(out))
        # THEN no verdict built on a moment's GIL holder, no deadlock, no fork hazard from a running thread
        assert status == 0, err
        assert not [v for v in report["verdicts"] if v["kind"] in ("gil-holder-blocked", "gil-nobody-holds")]
        assert report["deadlocks"] == [] and report["fork_hazards"] == []
        for t in report["threads"]:
            if t["tid"] in spinners:
                # a spinner is running, or was caught waiting for the GIL throughout both reads
                b = t["blocked_on"]
                assert (t["problem"] or "").startswith("running") or (b and b["kind"] == "gil"), t
        main = next(t for t in report["threads"] if t["tid"] == s.pid)
        assert main["blocked_on"]["syscall"]["name"] == "clock_nanosleep"

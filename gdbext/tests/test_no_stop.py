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
    # (exit status 4: the child waits on a pipe only its parent holds, which its report does not look at)
    for _ in range(5):
        status, out, err = harness.pyhang_cli("report", "--no-stop", "--json", "-p", child)
        assert status == 4, err
        assert tracer(child) == 0
    for _ in range(5):
        # the default: the command line sees the write on a pipe and does not stop the child
        status, out, err = harness.pyhang_cli("report", "--json", "-p", child)
        assert status == 4, err
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


def test_every_command_reads_such_a_process_without_stopping_it(pipe_hang):
    child = pipe_hang.truth["child"]
    before = (syscall_record(child), written(child))
    status, out, err = harness.pyhang_cli("py-bt", "-p", child)
    assert status == 0 and 'File "<string>", line 1, in <module>' in out, (out, err)
    assert "not stopped because LWP %d is inside write on fd 2" % child in out
    status, out, err = harness.pyhang_cli("lock-owner", "-p", child)
    assert status == 0 and "waits in write on fd 2" in out and "held only by PID %d" % pipe_hang.pid in out, out
    status, out, err = harness.pyhang_cli("gil-holder", "-p", child)
    assert status == 0 and "GIL" in out, (out, err)
    status, out, err = harness.pyhang_cli("py-bt-full", "-p", child)
    assert status == 0 and "#0 File \"<string>\", line 1, in <module>" in out, (out, err)
    # (the child runs `python -c` at module level: its innermost frame's locals are the module's, it has no
    # asyncio, and it is no fork child: subprocess exec'd it)
    status, out, err = harness.pyhang_cli("py-locals", "-p", child)
    assert status == 0 and 'innermost Python frame: File "<string>", line 1, in <module>' in out, (out, err)
    status, out, err = harness.pyhang_cli("py-tasks", "-p", child)
    assert status == 0 and out.startswith("no asyncio task or event loop in this process"), (out, err)
    status, out, err = harness.pyhang_cli("fork-hazards", "-p", child)
    assert status == 0 and out.startswith("fork-hazards: live process %d" % child), (out, err)
    assert tracer(child) == 0 and (syscall_record(child), written(child)) == before


def blocked_facts(report):
    """What each thread waits on, as the analysis said it, keyed by TID."""
    out = {}
    for t in report["threads"]:
        b = t["blocked_on"]
        if b is not None:
            out[t["tid"]] = (b["kind"], b["address"], sorted(b["owners"]), b["owner_source"],
                             (b.get("syscall") or {}).get("name"))
    return out


def parked_cases():
    """The parked scenarios on every interpreter, and more of them on Debian's 3.11."""
    cases = [pytest.param(path, script, id="%s-%s" % (name, script[:-3]))
             for name, path in harness.interpreters() for script in ("py_locks.py", "lock_abba.py", "syscall_waits.py")]
    cases += [pytest.param(PY, script, id="debian-3.11-%s" % script.split(".")[0])
              for script in ("lock_join.py", "py_buffered.py threads", "import_cycle.py", "own_locks.py", "py_names.py",
                             "parked_threads.py", "asyncio_tasks.py")]
    return cases


@pytest.mark.parametrize("python,script", parked_cases())
def test_parked_threads_read_without_stopping_give_the_facts_gdb_gives(scenario, python, script):
    # GIVEN a program whose threads are all parked
    exe, env = harness.stripped_interpreter(python)
    script, *args = script.split()
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, script)] + args, env=env)
    # WHEN it is read without stopping it, and then by gdb (one look each: gdb's report takes no second one)
    status, out, err = harness.pyhang_cli("report", "--no-stop", "--once", "--json", "-p", s.pid)
    quiet = harness.validated_report(json.loads(out))
    stopped = harness.report_json(pid=s.pid)
    # (a report was made, and it concludes what the stopped one does)
    assert status == quiet["exit_status"] == stopped["exit_status"] != 1, err
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


def test_a_thread_switching_between_two_stacks_is_running_or_at_one_of_them_never_a_mix(scenario):
    # GIVEN a thread that sleeps 1 ms in one function, then 1 ms in another, forever, and a spinning thread
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "switching.py")])
    switcher = next(t for t in s.truth["threads"] if t["role"] == "switcher")
    spinner = next(t for t in s.truth["threads"] if t["role"] == "spinner")
    seen = set()
    for _ in range(10):
        status, out, err = harness.pyhang_cli("report", "--no-stop", "--json", "-p", s.pid)
        assert status == 0, err
        report = harness.validated_report(json.loads(out))
        threads = {t["tid"]: t for t in report["threads"]}
        t = threads[switcher["tid"]]
        if (t["problem"] or "").startswith("running"):
            seen.add("running")
            assert t["blocked_on"] is None
        else:
            # THEN when it was caught parked, it is in its sleep or waiting for the GIL to go on, in one of its
            # two functions, under its loop
            b = t["blocked_on"]
            assert b["kind"] == "gil" or (b.get("syscall") or {}).get("name") == "clock_nanosleep", b
            functions = [f["function"] for f in t["python_frames"]]
            assert functions[0] in switcher["functions"] and functions[1] == "switch", functions
            seen.add(functions[0])
        assert (threads[spinner["tid"]]["problem"] or "").startswith("running") or \
            threads[spinner["tid"]]["blocked_on"]["kind"] == "gil"
        assert report["deadlocks"] == [] and report["fork_hazards"] == []
    assert seen, "the switcher was never seen"

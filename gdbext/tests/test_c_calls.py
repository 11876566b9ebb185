"""The C callable a Python frame calls (time.sleep, lock.acquire,
select.select, os.read, sorted and list.sort calling back into Python, a C
__init__ iterating a generator, a call nested in another's arguments, calls
after and inside try/finally), on every interpreter present, stripped, live
and from a core: each frame that calls one names it as the scenario recorded
it (3.14+ from the stack pointer the frame saved, 3.6 - 3.13 from the stack
depth its code gives the call); a call of a Python class names nothing, and
where the code cannot tell the depth (a finally body before 3.9) nothing is
named rather than a wrong callable; and no thread waiting for the lock
the main thread holds is taken to hold it itself."""
import os
import re

import pytest

import harness

INTERPRETERS = harness.interpreters()


@pytest.fixture(scope="module", params=INTERPRETERS, ids=[name for name, _ in INTERPRETERS])
def calls(request):
    """The scenario, started once per interpreter for every test here."""
    exe, env = harness.stripped_interpreter(request.param[1])
    s = harness.Scenario([exe, "-u", os.path.join(harness.SCENARIOS, "c_calls.py")], env=env).start()
    try:
        yield s, exe
    finally:
        s.stop()


def version(truth):
    return tuple(int(x) for x in truth["python"].split(".")[:2])


def without_addresses(text):
    return re.sub(r" at 0x[0-9a-f]+", " at ADDR", text)


def frame_named(frames, function):
    # 3.11+ name frames by co_qualname, earlier versions by co_name
    return next(k for k, f in enumerate(frames) if f["function"] == function or f["function"].endswith("." + function))


def check(report, truth, where):
    threads = {t["tid"]: t for t in report["threads"]}
    for t in truth["threads"]:
        frames = threads[t["tid"]]["python_frames"]
        expected = {}
        for call in t["calls"]:
            before = call.get("unknown_before")
            known = not before or version(truth) >= tuple(before)
            expected[frame_named(frames, call["frame"])] = call["options"] if known else None
        for k, f in enumerate(frames):
            if k in expected and expected[k] is None:
                assert f["c_call"] is None, (where, t["role"], f)
                continue
            options = expected.get(k)
            if not options:
                # the scenario's own frames call no other C callable (a Python class at most);
                # threading's own (Context.run on 3.14) are not the scenario's to record
                if f["file"].endswith("c_calls.py"):
                    assert f["c_call"] is None, (where, t["role"], k, f)
                continue
            got = f["c_call"]
            assert got is not None, (where, t["role"], f)
            assert got["confidence"] == "certain", (where, t["role"], got)
            assert {"function": got["function"], "repr": without_addresses(got["repr"])} in [
                {"function": o["function"], "repr": without_addresses(o["repr"])} for o in options], (where, got)


def test_each_frame_names_the_c_callable_it_calls_live_and_from_a_core(calls):
    # GIVEN threads inside C calls, each having recorded which callable each of its frames calls
    s, exe = calls
    # WHEN pyhang reports on the process live, then on a core of it
    # THEN each frame names what it calls, never another callable
    live = harness.report_json(pid=s.pid)
    check(live, s.truth, "live")
    check(harness.report_json(executable=exe, core=s.gcore()), s.truth, "core")
    # AND the threads waiting for LOCK, which the main thread holds, are not said to wait for themselves: what
    # an earlier expression of theirs left on the value stack (LOCK.acquire's method and self) is no lock held
    assert live["deadlocks"] == [], [(d["threads"], d["confidence"]) for d in live["deadlocks"]]


def test_py_bt_shows_the_c_callable_above_the_frame_that_calls_it(calls):
    # GIVEN the thread asleep in time.sleep
    s, _ = calls
    sleeper = harness.role_tid(s, "sleep")
    # WHEN py-bt prints every thread's stack
    text, _ = harness.run_gdb_marked("thread apply all py-bt", pid=s.pid)
    block = text[thread_at(text, sleeper):]
    lines = block.splitlines()
    at = next(k for k, line in enumerate(lines) if line.strip().startswith("File ") and "in sleeper" in line)
    # THEN the line above the sleeper's frame names time.sleep as CPython's repr does
    assert lines[at - 1].strip() == "<built-in function sleep>  [C: time.sleep]", block


def thread_at(text, tid):
    """Where the thread's header is in `text`: pyhang's "(LWP 7)", or gdb's `thread apply` one, "(Thread 0x… (LWP
    7) …):" or, without libthread_db, "(LWP 7 "name"):"."""
    return re.search(r"\(LWP %d[ )]" % tid, text).start()


def sleeper_lines(text, sleeper):
    """The lines of `text` from the sleeper thread's header on, and the index of its `sleeper` frame."""
    lines = text[thread_at(text, sleeper):].splitlines()
    return lines, next(k for k, line in enumerate(lines) if "File " in line and "in sleeper" in line)


def test_py_bt_full_shows_the_c_callable_above_the_frame_that_calls_it_in_gdb_and_from_the_command_line(calls):
    # GIVEN the thread asleep in time.sleep
    s, _ = calls
    sleeper = harness.role_tid(s, "sleep")
    # WHEN py-bt-full prints that thread's stack in gdb, and the command line prints every thread's
    text, _ = harness.run_gdb_marked("thread apply all py-bt-full", pid=s.pid)
    _, cli_text, err = harness.pyhang_cli("py-bt-full", "-p", s.pid)
    assert "(LWP %d)" % sleeper in cli_text, err
    # THEN in both the line above the sleeper's numbered frame names time.sleep, under the frame's text
    for where, out in (("gdb", text), ("cli", cli_text)):
        lines, at = sleeper_lines(out, sleeper)
        assert lines[at].startswith("#"), (where, lines[at])
        assert lines[at - 1] == "   <built-in function sleep>  [C: time.sleep]", (where, "\n".join(lines[:at + 1]))

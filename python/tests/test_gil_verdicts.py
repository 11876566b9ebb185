"""Waits for a GIL that no thread holds are the GIL verdicts', never
"owners unknown": every Python thread waiting is gil-nobody-holds; some
waiting while other Python threads do not is a hand-over caught mid-way."""
from pyhang.analysis.deadlocks import verdicts
from pyhang.model.kinds import GilState, VerdictKind, WaitKind
from pyhang.model.report import BlockedOn, GilSummary, Report, TargetInfo, ThreadReport
from pyhang.model.waits import SyscallWait


def waiter(tid):
    return ThreadReport(tid=tid, gdb_num=tid, gil=GilState.WAITING, blocked_on=BlockedOn(kind=WaitKind.GIL))


def sleeper(tid):
    return ThreadReport(tid=tid, gdb_num=tid, gil=GilState.RELEASED,
                        blocked_on=BlockedOn(kind=WaitKind.SYSCALL, syscall=SyscallWait(name="clock_nanosleep")))


def kinds(report):
    return {v.kind: v.threads for v in verdicts(report)}


def test_a_free_gil_some_threads_wait_for_while_another_sleeps_is_a_handover():
    report = Report(target=TargetInfo(kind="core"), threads=[sleeper(1), waiter(2), waiter(3)],
                    gil=GilSummary(locked=False))
    assert kinds(report) == {VerdictKind.GIL_HANDOVER: [2, 3]}


def test_every_python_thread_waiting_for_a_free_gil_is_nobody_holds():
    report = Report(target=TargetInfo(kind="core"), threads=[waiter(2), waiter(3)], gil=GilSummary(locked=False))
    assert kinds(report) == {VerdictKind.GIL_NOBODY_HOLDS: [2, 3]}


def test_a_held_gil_whose_holder_is_unknown_stays_owners_unknown():
    report = Report(target=TargetInfo(kind="core"), threads=[sleeper(1), waiter(2)], gil=GilSummary(locked=True))
    assert kinds(report) == {VerdictKind.OWNERS_UNKNOWN: [2]}


def test_a_gil_holder_blocked_in_a_ctypes_call_is_told_to_bind_with_cdll_and_named_by_its_python_call():
    import json
    import os
    from pyhang import analysis
    from pyhang.render.verdicts import verdict_advice, verdict_text
    from pyhang.render.text import names_of
    # GIVEN the snapshot of a thread blocked in libc's pause called through a ctypes.PyDLL, holding the GIL
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "testdata", "snapshots", "gil_held_in_native.json")
    with open(path) as f:
        doc = json.load(f)
    report = analysis.build_report(analysis.from_snapshot(doc["snapshot"])[0])
    (v,) = [v for v in report.verdicts if v.kind == VerdictKind.GIL_HOLDER_BLOCKED]
    # THEN the verdict knows it is a ctypes call, made from the program's own frame
    assert v.facts.ctypes is True and v.facts.caller.function == "hold_gil_and_block", v.facts
    text = verdict_text(v, names_of(report))
    assert "called through ctypes from File" in text and "gil_held_in_native.py" in text and "ctypes.PyDLL" in text
    # AND the advice is to load the library with CDLL, not the generic C-extension advice
    assert verdict_advice(v, report).startswith("load the library with ctypes.CDLL, not ctypes.PyDLL")


def test_a_native_stack_is_a_ctypes_call_only_with_libffi_below_ctypes():
    from pyhang.analysis.python_state import ctypes_call
    from pyhang.model.report import NativeFrame
    libc, ffi, ct = "/lib/libc.so.6", "/lib/libffi.so.8", "/lib/_ctypes.cpython-311-x86_64-linux-gnu.so"
    frames = [NativeFrame(pc=1, function="pause", library=libc), NativeFrame(pc=2, function="ffi_call", library=ffi),
              NativeFrame(pc=3, library=ct)]
    assert ctypes_call(frames)
    assert not ctypes_call(frames[:2]) and not ctypes_call([frames[0], frames[2]])
    assert not ctypes_call([frames[0], frames[2], frames[1]])   # ctypes' module above, not below libffi

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

"""A lock held across a long sleep (analysis.held): the waiters of a lock
whose holder sleeps for long are a hang (exit 5), said with the holder,
the lock, the time left and the threads behind them; a short sleep, a
sleep of unknown length, a select that watches fds, or a wait that is no
lock's is no such finding.  On synthetic reports."""
from pyhang.analysis import account, completeness, deadlocks, held
from pyhang.model.kinds import AccountReason, ExitStatus, OwnerSource, PythonStatus, ThreadState, VerdictKind, \
    WaitKind
from pyhang.model.report import BlockedOn, Deadlock, Edge, PythonFrame, Report, TargetInfo, ThreadReport
from pyhang.model.record import to_data
from pyhang.model.waits import SyscallWait
from pyhang.render.verdicts import headline, verdict_advice, verdict_text

PID = 100
HOUR = 3600 * 10 ** 9


def sleeping(timeout, name="clock_nanosleep", **more):
    return BlockedOn(kind=WaitKind.SYSCALL, syscall=SyscallWait(name=name, timeout=timeout, **more))


def lock_wait(address=0x1000):
    return BlockedOn(kind=WaitKind.PY_LOCK, address=address)


def report(waits, edges):
    """Threads 100, 101, ... waiting on `waits`; `edges`: (waiter index, owner index, kind, source)."""
    r = Report(target=TargetInfo(kind="live", pid=PID), python_status=PythonStatus.OK)
    for i, b in enumerate(waits):
        r.threads.append(ThreadReport(tid=PID + i, gdb_num=i + 1, gil="released", blocked_on=b,
                                      python_frames=[PythonFrame(function="sleep", file="", line=0),
                                                     PythonFrame(function="hold", file="/srv/app.py", line=7)]))
    r.edges = [Edge(waiter=PID + w, owner=PID + o, kind=kind, address=0x1000, source=source)
               for w, o, kind, source in edges]
    return r


def judged(r):
    r.verdicts = deadlocks.verdicts(r)
    account.analyse(r)
    r.exit_status = completeness.report_status(r)
    return r


def test_waiters_of_a_lock_held_across_an_hour_long_sleep_are_a_hang_with_the_holder_named():
    r = judged(report([sleeping({"ns": 10 ** 12, "absolute": True, "clock": "CLOCK_MONOTONIC", "left_ns": HOUR}),
                       lock_wait()], [(1, 0, WaitKind.PY_LOCK, OwnerSource.HEURISTIC)]))
    (v,) = [v for v in r.verdicts if v.kind == VerdictKind.HELD_ACROSS_SLEEP]
    assert v.threads == [100, 101] and v.facts.holder == 100 and v.facts.left_ns == HOUR
    assert v.facts.frame.file == "/srv/app.py"   # where the program sleeps, not the builtin
    assert [t.account.state for t in r.threads] == [ThreadState.HUNG, ThreadState.HUNG]
    assert {t.account.reason for t in r.threads} == {AccountReason.FINDING}
    assert r.exit_status == ExitStatus.HUNG and headline(r) == "Hung without a deadlock: a lock is held across a " \
                                                                 "long sleep."
    text = verdict_text(v, lambda t: "T%d" % t)
    assert "T100 most likely holds threading.Lock 0x1000 while it sleeps (clock_nanosleep) for another 3600 s " \
           "in hold (app.py line 7); T101 waits for it" in text
    assert "release()" in verdict_advice(v)


def test_a_relative_sleep_counts_by_the_time_asked_for_and_a_recorded_owner_is_said_without_most_likely():
    # time.sleep before 3.11: select(0, NULL, NULL, NULL, &tv)
    r = judged(report([sleeping({"ns": HOUR}, name="select", fds=[], watches_fds=True), lock_wait()],
                      [(1, 0, WaitKind.PY_RLOCK, OwnerSource.LOCK_WORD)]))
    (v,) = [v for v in r.verdicts if v.kind == VerdictKind.HELD_ACROSS_SLEEP]
    assert v.facts.requested_ns == HOUR and "left_ns" not in to_data(v.facts)
    assert "T100 holds threading.RLock 0x1000 while it sleeps (select) in a sleep of 3600 s" in \
        verdict_text(v, lambda t: "T%d" % t)


def test_threads_waiting_only_on_the_sleepers_waiters_are_behind_it_and_one_with_another_way_out_is_not():
    # 102 joins 101 (which waits for the sleeper's lock); 103 waits on 101 and on the running 104
    r = judged(report([sleeping({"ns": HOUR}, name="nanosleep"), lock_wait(), BlockedOn(kind=WaitKind.PY_JOIN),
                       lock_wait(), None],
                      [(1, 0, WaitKind.PY_LOCK, OwnerSource.HEURISTIC), (2, 1, WaitKind.PY_JOIN, OwnerSource.THREAD_OBJECT),
                       (3, 1, WaitKind.PY_LOCK, OwnerSource.HEURISTIC), (3, 4, WaitKind.PY_LOCK, OwnerSource.HEURISTIC)]))
    (v,) = [v for v in r.verdicts if v.kind == VerdictKind.HELD_ACROSS_SLEEP]
    assert v.facts.waiters == [101] and v.facts.behind == [102]
    assert r.thread(103).account.state == ThreadState.BLOCKED
    assert "and 1 more thread waits on them" in verdict_text(v, str)


def test_no_finding_for_a_short_sleep_an_unknown_one_a_select_on_fds_or_a_wait_no_lock_is_behind():
    cases = [
        ([sleeping({"ns": 10 ** 9}, name="nanosleep"), lock_wait()], WaitKind.PY_LOCK),   # a second: contention
        ([sleeping({"ns": 10 ** 12, "absolute": True}), lock_wait()], WaitKind.PY_LOCK),   # a core: no clock read
        ([sleeping(None), lock_wait()], WaitKind.PY_LOCK),   # the timeout could not be read
        ([sleeping({"ns": HOUR}, name="select", fds=[{"fd": 3}], watches_fds=True), lock_wait()], WaitKind.PY_LOCK),
        ([sleeping({"ns": HOUR}, name="nanosleep"), BlockedOn(kind=WaitKind.PY_JOIN)], WaitKind.PY_JOIN),
        ([sleeping({"ns": HOUR}, name="read", fd=3), lock_wait()], WaitKind.PY_LOCK),
    ]
    for waits, kind in cases:
        r = judged(report(waits, [(1, 0, kind, OwnerSource.HEURISTIC)]))
        assert not [v for v in r.verdicts if v.kind == VerdictKind.HELD_ACROSS_SLEEP], waits[0]


def test_a_sleep_resumed_through_restart_syscall_is_read_as_the_call_it_resumes():
    t = ThreadReport(tid=1, gdb_num=1, gil="released",
                     blocked_on=sleeping({"ns": HOUR}, name="restart_syscall", restarts={"syscall": "nanosleep"}))
    assert held.sleep_left(t) == {"call": "nanosleep", "requested_ns": HOUR}


def test_a_sleeper_that_is_one_of_two_suspects_or_waited_on_from_a_deadlock_is_not_accused():
    # 101 waits for a Lock both the sleeper and 102 reference (102 holds it, in fact)
    r = judged(report([sleeping({"ns": HOUR}, name="nanosleep"), lock_wait(), lock_wait(0x2000)],
                      [(1, 0, WaitKind.PY_LOCK, OwnerSource.HEURISTIC), (1, 2, WaitKind.PY_LOCK, OwnerSource.HEURISTIC)]))
    assert not [v for v in r.verdicts if v.kind == VerdictKind.HELD_ACROSS_SLEEP]
    r = report([sleeping({"ns": HOUR}, name="nanosleep"), lock_wait()], [(1, 0, WaitKind.PY_LOCK, OwnerSource.LOCK_WORD)])
    r.deadlocks = [Deadlock(threads=[101, 102], confidence="certain", edges=[])]
    assert not held.verdicts(r)


def test_from_a_core_without_a_clock_a_lock_held_across_an_absolute_sleep_is_not_accounted_for():
    # a core gdb wrote: the holder sleeps until 1000 s on CLOCK_MONOTONIC, and nothing says when that is
    r = judged(report([sleeping({"ns": 10 ** 12, "absolute": True, "clock": "CLOCK_MONOTONIC"}), lock_wait()],
                      [(1, 0, WaitKind.PY_LOCK, OwnerSource.LOCK_WORD)]))
    assert not [v for v in r.verdicts if v.kind == VerdictKind.HELD_ACROSS_SLEEP]
    waiter = r.thread(101)
    assert (waiter.account.state, waiter.account.reason) == (ThreadState.UNACCOUNTED, AccountReason.SLEEP_UNKNOWN)
    assert r.exit_status == ExitStatus.INCOMPLETE and headline(r) != "No deadlock found."
    (v,) = [v for v in r.verdicts if v.kind == VerdictKind.UNACCOUNTED]
    assert v.facts.waits[0].sleepers == [100]
    assert "T101 waits in threading.Lock 0x1000, held by LWP 100, which sleeps until a deadline on its clock; a " \
           "core gdb or the kernel wrote records no clock" in verdict_text(v, lambda t: "T%d" % t)

"""The closed-world account (analysis.account): each thread is in exactly
one class, each class from its own facts; the all-clear only when no
thread is a problem; every reason worded.  On synthetic reports (every
system-call class, damaged facts) and on recorded snapshots."""
import pytest

from pyhang.analysis import account, completeness
from pyhang.model.files import FdHolder, FdObject, FileLock
from pyhang.model.kinds import AccountReason, Confidence, ExitStatus, PythonStatus, ThreadState, VerdictKind, WaitKind
from pyhang.model.report import BlockedOn, Deadlock, Edge, Report, TargetInfo, ThreadReport, Verdict
from pyhang.model.waits import SyscallWait
from pyhang.render.text import render_text
from pyhang.render.account import _UNACCOUNTED_WHY
from pyhang.render.verdicts import headline, verdict_text
from test_analysis import recorded, replay

PID = 100


def syscall(name, **facts):
    return BlockedOn(kind=WaitKind.SYSCALL, syscall=SyscallWait(name=name, **facts))


def pipe(*pids, kind="pipe"):
    return FdObject(kind=kind, link="%s:[7]" % kind, holders=[FdHolder(pid=p, fds=[4]) for p in pids])


def report_of(*waits):
    """A report of a Python process whose threads 100, 101, ... wait on `waits` (None: running)."""
    r = Report(target=TargetInfo(kind="live", pid=PID), python_status=PythonStatus.OK)
    for i, b in enumerate(waits):
        r.threads.append(ThreadReport(tid=PID + i, gdb_num=i + 1, gil="released", blocked_on=b))
    return r


def classes(r):
    account.analyse(r)
    r.exit_status = completeness.report_status(r)
    return [(t.account.state, t.account.reason) for t in r.threads]


CASES = [
    (None, ThreadState.RUNNING, AccountReason.ON_CPU),
    (syscall("clock_nanosleep", timeout={"ns": 10 ** 9}), ThreadState.IDLE, AccountReason.TIMED),
    (syscall("poll", timeout={"ns": 500}, fd_table=True, fds=[]), ThreadState.IDLE, AccountReason.TIMED),
    (syscall("epoll_wait", timeout={"ns": None}), ThreadState.IDLE, AccountReason.SELECTOR),
    (syscall("accept4", fd=3, fd_table=True), ThreadState.IDLE, AccountReason.LISTENER),
    (syscall("pause"), ThreadState.IDLE, AccountReason.SIGNAL),
    (syscall("read", fd=0, fd_table=True, object=FdObject(kind="file", path="/dev/pts/3")),
     ThreadState.IDLE, AccountReason.TERMINAL),
    (syscall("poll", timeout={"ns": None}, fd_table=True,
             fds=[{"fd": 3, "direction": "read", "object": FdObject(kind="anon", link="anon_inode:[eventfd]")}]),
     ThreadState.IDLE, AccountReason.SELECTOR),
    (syscall("read", fd=4, fd_table=True, object=pipe(7)), ThreadState.ELSEWHERE, AccountReason.OTHER_PROCESS),
    (syscall("read", fd=4, fd_table=True, object=pipe(PID, 7)), ThreadState.ELSEWHERE, AccountReason.OTHER_PROCESS),
    (syscall("wait4", child=-1), ThreadState.ELSEWHERE, AccountReason.CHILD),
    (syscall("flock", fd=5, fd_table=True, lock_holders=[FileLock(pid=7, type="FLOCK", access="WRITE")]),
     ThreadState.ELSEWHERE, AccountReason.FILE_LOCK),
    (syscall("recvfrom", fd=4, fd_table=True, object=pipe(kind="socket")), ThreadState.ELSEWHERE, AccountReason.PEER),
    (syscall("read", fd=4), ThreadState.UNACCOUNTED, AccountReason.NO_FD_TABLE),
    (syscall("poll", timeout={"ns": None}, fds=None), ThreadState.UNACCOUNTED, AccountReason.NO_FD_TABLE),
    (syscall("read", fd=4, fd_table=True, object=pipe(PID)), ThreadState.UNACCOUNTED, AccountReason.OWN_PROCESS),
    (syscall("read", fd=4, fd_table=True, object=FdObject(kind="pipe", holders=None)),
     ThreadState.UNACCOUNTED, AccountReason.HOLDERS_UNKNOWN),
    (syscall("write", fd=4, fd_table=True, object=pipe()), ThreadState.UNACCOUNTED, AccountReason.NO_OTHER_END),
    (syscall("flock", fd=5, fd_table=True, lock_holders=[]), ThreadState.UNACCOUNTED, AccountReason.HOLDERS_UNKNOWN),
    (syscall("semop"), ThreadState.UNACCOUNTED, AccountReason.NOT_MODELED),
    (syscall(None), ThreadState.UNACCOUNTED, AccountReason.NOT_MODELED),
]


@pytest.mark.parametrize("wait,state,reason", CASES, ids=["%s-%s" % (c[1], c[2]) for c in CASES])
def test_each_wait_is_in_its_class_and_only_problems_deny_the_all_clear(wait, state, reason):
    r = report_of(wait)
    assert classes(r) == [(state, reason)]
    if state in ThreadState.PROBLEMS:
        assert r.exit_status == ExitStatus.INCOMPLETE and headline(r) != "No deadlock found."
        # said as a finding with its raw facts, in words
        (v,) = [v for v in r.verdicts if v.kind == VerdictKind.UNACCOUNTED]
        assert v.threads == [PID] and v.facts.waits[0].reason == reason
        assert verdict_text(v, lambda tid: "Thread %d" % tid).startswith("Thread %d waits in " % PID)
    else:
        assert r.exit_status == ExitStatus.OK and headline(r) == "No deadlock found."
        assert not r.verdicts
        assert "Every thread accounted for: 1 " in render_text(r)


def test_every_unaccounted_reason_has_words_and_no_unknown_reason_breaks_them():
    problem_reasons = {reason for _, state, reason in CASES if state in ThreadState.PROBLEMS}
    assert problem_reasons - {AccountReason.NOT_MODELED} <= set(_UNACCOUNTED_WHY)
    v = Verdict(kind=VerdictKind.UNACCOUNTED, threads=[1],
                facts={"waits": [{"tid": 1, "reason": "a-reason-of-another-version", "pids": []}]})
    assert verdict_text(v, lambda tid: "Thread 1") == \
        "Thread 1 waits in an unknown wait: pyhang does not model what ends this wait"


def test_a_wait_with_owners_is_blocked_and_a_cycle_deadlocked():
    r = report_of(BlockedOn(kind=WaitKind.MUTEX, address=8, owners=[PID + 1], owner_alive=True), None,
                  BlockedOn(kind=WaitKind.MUTEX, address=9, owners=[PID + 3], owner_alive=True),
                  BlockedOn(kind=WaitKind.MUTEX, address=10, owners=[PID + 2], owner_alive=True))
    r.edges = [Edge(waiter=PID, owner=PID + 1, kind="mutex", address=8, source="lock-word"),
               Edge(waiter=PID + 2, owner=PID + 3, kind="mutex", address=9, source="lock-word"),
               Edge(waiter=PID + 3, owner=PID + 2, kind="mutex", address=10, source="lock-word")]
    r.deadlocks = [Deadlock(threads=[PID + 2, PID + 3], confidence="certain", edges=r.edges[1:])]
    assert classes(r) == [(ThreadState.BLOCKED, AccountReason.OWNER), (ThreadState.RUNNING, AccountReason.ON_CPU),
                          (ThreadState.DEADLOCKED, AccountReason.CYCLE), (ThreadState.DEADLOCKED, AccountReason.CYCLE)]
    assert r.threads[0].account.threads == [PID + 1]
    assert r.exit_status == ExitStatus.DEADLOCK


def test_a_thread_named_by_a_finding_takes_that_findings_class():
    r = report_of(BlockedOn(kind=WaitKind.PY_FUTURE), BlockedOn(kind=WaitKind.PY_EVENT),
                  BlockedOn(kind=WaitKind.PY_LOCK), BlockedOn(kind=WaitKind.PY_EVENT))
    r.verdicts = [Verdict(kind=VerdictKind.EXECUTOR_STARVATION, threads=[PID], facts={
                      "work_queue": 0x10, "workers": [PID], "futures": [0x20], "confidence": Confidence.LIKELY}),
                  Verdict(kind=VerdictKind.IDLE, threads=[PID + 1]),
                  Verdict(kind=VerdictKind.OWNER_GONE, threads=[PID + 2], facts={
                      "waiter": PID + 2, "kind": WaitKind.PY_LOCK, "address": 0x30, "owners": [PID + 9]}),
                  Verdict(kind=VerdictKind.OWNERS_UNKNOWN, threads=[PID + 3], facts={"waits": []})]
    assert classes(r) == [(ThreadState.HUNG, AccountReason.FINDING), (ThreadState.IDLE, AccountReason.WAITS_FOR_WORK),
                          (ThreadState.ELSEWHERE, AccountReason.OWNER_GONE),
                          (ThreadState.UNACCOUNTED, AccountReason.OWNERS_UNKNOWN)]
    assert [t.account.finding for t in r.threads] == [VerdictKind.EXECUTOR_STARVATION, VerdictKind.IDLE,
                                                      VerdictKind.OWNER_GONE, VerdictKind.OWNERS_UNKNOWN]
    # (no second finding for a thread a finding already names)
    assert not [v for v in r.verdicts if v.kind == VerdictKind.UNACCOUNTED]
    assert r.exit_status == ExitStatus.HUNG


def test_a_process_that_runs_no_python_keeps_its_own_answer():
    r = report_of(syscall("read", fd=4))
    r.python_status = PythonStatus.NOT_PYTHON
    assert classes(r) == [(ThreadState.UNACCOUNTED, AccountReason.NO_FD_TABLE)]
    assert r.exit_status == ExitStatus.NO_PYTHON


@pytest.mark.parametrize("case", ["python_objects", "buffered_io", "lock_abba_unrecorded", "native_locks"])
def test_every_recorded_threads_is_in_exactly_one_class_and_the_status_follows(case):
    doc = recorded(case)
    rep, got = replay(doc)
    assert all(t["account"]["state"] in ThreadState.ALL for t in got["threads"])
    assert sum(got["account"].values()) == len(got["threads"])
    problems = {t["account"]["state"] for t in got["threads"]} & set(ThreadState.PROBLEMS)
    assert (got["exit_status"] == ExitStatus.OK) == (not problems), (got["exit_status"], problems)


def test_the_schema_lists_every_class_and_reason_the_account_gives():
    import json
    import os
    from pyhang.model.kinds import AccountReason
    schema = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "pyhang-report-1.schema.json")))
    reasons = {v for k, v in vars(AccountReason).items() if k.isupper()}
    assert set(schema["$defs"]["account"]["properties"]["reason"]["enum"]) == reasons
    assert tuple(schema["$defs"]["thread_state"]["enum"]) == ThreadState.ALL


def test_a_futex_wait_with_a_timeout_ends_by_itself_and_one_without_does_not():
    from pyhang.analysis.syscalls import FUTEX, RESTART, timed_futex_wait
    assert timed_futex_wait({"orig_rax": FUTEX, "rsi": 0x89, "r10": 0x7ffd0000})      # WAIT_BITSET|PRIVATE, abstime
    assert timed_futex_wait({"orig_rax": RESTART})                                    # resumed: only timed waits are
    assert not timed_futex_wait({"orig_rax": FUTEX, "rsi": 0x80, "r10": 0})           # sem_wait: no timeout
    assert not timed_futex_wait({"orig_rax": FUTEX, "rsi": 0x81, "r10": 0x7ffd0000})  # a WAKE is no wait
    for garbage in (None, {}, {"orig_rax": 0xFFFFFFFFFFFFFFFF}, {"orig_rax": 7, "r10": 1}):
        assert not timed_futex_wait(garbage)


def test_a_timed_poll_on_pipes_only_other_processes_serve_waits_on_them_and_one_on_its_own_pipe_is_idle():
    # a DataLoader's parent polls its workers' result pipe 5 s at a time, in a loop
    def polls(*pids):
        return syscall("poll", timeout={"ns": 5 * 10 ** 9}, fd_table=True,
                       fds=[{"fd": 4, "direction": "read", "object": pipe(*pids)}])
    assert classes(report_of(polls(7, 8))) == [(ThreadState.ELSEWHERE, AccountReason.OTHER_PROCESS)]
    assert report_of(polls(7)).threads[0].account is None   # (classes() makes it)
    r = report_of(polls(7, 8))
    classes(r)
    assert r.threads[0].account.pids == [7, 8] and r.exit_status == ExitStatus.INCOMPLETE
    assert classes(report_of(polls(PID))) == [(ThreadState.IDLE, AccountReason.TIMED)]
    # from a core that records no fd table, who serves them is not known: never the all-clear
    r = report_of(syscall("poll", timeout={"ns": 5 * 10 ** 9}, fd_table=False, fds=[{"fd": 4, "direction": "read"}]))
    assert classes(r) == [(ThreadState.UNACCOUNTED, AccountReason.NO_FD_TABLE)] and r.exit_status == ExitStatus.INCOMPLETE
    # a sleep through a poll that watches no fd is a sleep, core or not
    assert classes(report_of(syscall("poll", timeout={"ns": 10 ** 12}, fd_table=False, fds=[]))) == [
        (ThreadState.IDLE, AccountReason.TIMED)]

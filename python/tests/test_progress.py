"""What a second look means (analysis.progress): each thread's moved facts;
waits pyhang cannot name that did not move, while nothing that could end
them moved either, are a hang; a thread that moved, or one waiting for what
comes from outside, keeps them unknown; findings about a thread that moved
are marked.  On synthetic reports and looks."""
from pyhang.analysis import account, completeness, progress
from pyhang.model.kinds import AccountReason, ExitStatus, ThreadState, VerdictKind, WaitKind
from pyhang.model.report import BlockedOn, SecondLook, ThreadLook, Verdict
from pyhang.model.waits import SyscallWait
from pyhang.render import json as render_json
from pyhang.render.text import render_text

from test_thread_classes import PID, report_of  # noqa: E402 (a Python process whose threads PID, PID+1, ... wait)


def unknown(tid):
    return Verdict(kind=VerdictKind.OWNERS_UNKNOWN, threads=[tid],
                   facts={"waits": [{"tid": tid, "kind": WaitKind.PY_EVENT, "address": 16, "name": None}]})


def looked(r, *looks):
    account.analyse(r)
    r.exit_status = completeness.report_status(r)
    before = r.exit_status
    stuck = progress.apply(r, SecondLook(interval=0.5, threads=list(looks)))
    r.exit_status = completeness.report_status(r)
    return before, stuck


def still(tid):
    return ThreadLook(tid=tid, cpu_ticks=0, voluntary=0, involuntary=0, syscall_changed=False, stack_moved=False)


def test_unknown_waits_that_did_not_move_while_nothing_else_could_are_a_hang():
    r = report_of(BlockedOn(kind=WaitKind.PY_EVENT, address=16), BlockedOn(kind=WaitKind.PY_EVENT, address=32))
    r.verdicts = [unknown(PID), Verdict(kind=VerdictKind.IDLE, threads=[PID + 1], facts={"waits": []})]
    before, stuck = looked(r, still(PID), still(PID + 1))
    assert before == ExitStatus.INCOMPLETE and stuck == [PID]
    assert r.exit_status == ExitStatus.HUNG
    (v,) = [v for v in r.verdicts if v.kind == VerdictKind.NO_PROGRESS]
    assert v.threads == [PID] and v.facts.interval == 0.5
    assert r.threads[0].account.state == ThreadState.HUNG and r.threads[0].account.reason == AccountReason.NO_PROGRESS
    text = render_text(r)
    assert text.splitlines()[3] == "Hung without a deadlock: blocked threads made no progress and nothing can end " \
                                   "their waits."
    assert "no progress in 0.5 s (second look)" in text
    assert "Second look after 0.5 s: 2 of 2 blocked threads made no progress." in text
    doc = render_json.to_json(r)
    assert doc["second_look"] == {"interval": 0.5, "problem": None, "moved": [], "no_progress": [PID, PID + 1]}
    assert [t["moved"] for t in doc["threads"]] == [[], []]


def test_a_thread_that_moved_keeps_the_unknown_waits_unknown_and_marks_its_findings():
    r = report_of(BlockedOn(kind=WaitKind.PY_EVENT, address=16), BlockedOn(kind=WaitKind.PY_LOCK, address=48))
    r.verdicts = [unknown(PID), unknown(PID + 1)]
    woke = ThreadLook(tid=PID + 1, cpu_ticks=3, voluntary=12, involuntary=0, syscall_changed=True, stack_moved=True)
    before, stuck = looked(r, still(PID), woke)
    assert stuck == [] and r.exit_status == before == ExitStatus.INCOMPLETE
    assert r.threads[1].moved == ["cpu", "switches", "syscall", "stack"] and r.threads[0].moved == []
    assert [v.facts.moved for v in r.verdicts if v.kind == VerdictKind.OWNERS_UNKNOWN] == [None, [PID + 1]]
    text = render_text(r)
    assert "a second look saw Thread 2 (LWP %d) move: this may be contention, not a hang" % (PID + 1) in text
    assert "moved in 0.5 s (second look): it used CPU time, it woke (context switches)" in text


def test_a_thread_waiting_for_outside_events_could_still_end_an_unknown_wait():
    r = report_of(BlockedOn(kind=WaitKind.PY_EVENT, address=16),
                  BlockedOn(kind=WaitKind.SYSCALL, syscall=SyscallWait(name="epoll_wait", timeout={"ns": None})))
    r.verdicts = [unknown(PID)]
    _, stuck = looked(r, still(PID), still(PID + 1))
    assert stuck == [] and r.exit_status == ExitStatus.INCOMPLETE
    assert r.threads[1].account.reason == AccountReason.SELECTOR


def test_a_look_that_could_not_be_taken_changes_nothing_and_says_so():
    r = report_of(BlockedOn(kind=WaitKind.PY_EVENT, address=16))
    r.verdicts = [unknown(PID)]
    account.analyse(r)
    assert progress.apply(r, SecondLook(interval=1.0, problem={"reason": "no-such-process", "path": "/proc/9", "number": 9})) == []
    assert r.threads[0].moved is None
    assert "Second look after 1 s: not taken (process 9 does not exist)" in render_text(r)


def test_a_thread_gone_between_the_looks_moved():
    assert ThreadLook(tid=1, gone=True).moved() == ["gone"]
    assert ThreadLook(tid=1).moved() == []   # nothing read: nothing said to move


def test_a_look_at_a_process_that_is_gone_says_so_and_raises_nothing():
    import subprocess
    from pyhang import second_look
    gone = subprocess.Popen(["true"])
    gone.wait()
    look = second_look.look(gone.pid, [gone.pid], 0.01)
    assert look.problem is not None and look.threads == []
    # said in words, as any target that cannot be opened is: never an exception's type name
    from pyhang.render.account import look_problem_text
    assert look_problem_text(look) == "process %d does not exist" % gone.pid, look.problem


def test_a_thread_waiting_on_another_process_may_end_an_unknown_wait_and_keeps_it_unknown():
    # a Pool's main thread waits on a result its result-handler thread completes once a worker writes
    from test_thread_classes import pipe, syscall
    r = report_of(BlockedOn(kind=WaitKind.PY_EVENT, address=16), syscall("read", fd=4, fd_table=True, object=pipe(7)))
    r.verdicts = [unknown(PID)]
    before, stuck = looked(r, still(PID), still(PID + 1))
    assert r.threads[1].account.state == ThreadState.ELSEWHERE
    assert stuck == [] and r.exit_status == before == ExitStatus.INCOMPLETE


def test_a_wait_on_a_process_shared_futex_is_never_judged_stuck_by_one_process_look():
    # an idle multiprocessing.Pool worker waits on the pool's shared semaphore, which a sibling process holds
    r = report_of(BlockedOn(kind=WaitKind.FUTEX, address=16))
    r.verdicts = [unknown(PID)]
    account.analyse(r, {PID: {"orig_rax": 202, "rsi": 0, "rdi": 16}})   # FUTEX_WAIT, no FUTEX_PRIVATE_FLAG
    assert r.threads[0].account.state == ThreadState.UNACCOUNTED
    assert r.threads[0].account.reason == AccountReason.SHARED_FUTEX
    r.exit_status = completeness.report_status(r)
    assert progress.apply(r, SecondLook(interval=0.5, threads=[still(PID)])) == []
    assert not [v for v in r.verdicts if v.kind == VerdictKind.NO_PROGRESS]
    # a private one (a threading.Lock's) is judged as before
    r = report_of(BlockedOn(kind=WaitKind.FUTEX, address=16))
    r.verdicts = [unknown(PID)]
    account.analyse(r, {PID: {"orig_rax": 202, "rsi": 128, "rdi": 16}})
    assert r.threads[0].account.reason == AccountReason.OWNERS_UNKNOWN
    assert progress.apply(r, SecondLook(interval=0.5, threads=[still(PID)])) == [PID]

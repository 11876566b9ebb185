"""A lock held across a long sleep (the held-across-sleep verdict).

A thread that holds a lock and sleeps in `time.sleep` (nanosleep,
clock_nanosleep, or select with no fds before 3.11) for long lets no waiter
of that lock run until it wakes; a program that does so in a loop (`with
lock: ... time.sleep(60)`) never lets them run.  By the account's rules the
waiters are blocked on an owner that can progress (the sleep ends by
itself), which would be an all-clear; this finding says instead what keeps
them waiting.  Likely, never certain: the holder may release the lock once
it wakes.  Needs how long the sleep still lasts (or, for a relative sleep,
how long it was asked to last): a core gdb writes records no clock, so an
absolute sleep read from one gets no finding.

Plain Python over the report's edges (analysis.deadlocks.verdicts calls it)."""
from pyhang.analysis.asyncio import program_frame
from pyhang.model.kinds import Confidence, OwnerSource, VerdictKind, WaitKind
from pyhang.model.report import Verdict
from pyhang.model.verdict_facts import HeldAcrossSleepFacts, HeldLock
from pyhang.model.waits import CodeLine, syscall_of

# A sleep at least this long, still to come, with a lock held is a hang's cause, not a moment of contention.
LONG_SLEEP_NS = 10 * 1000000000

# Waits on what the owner holds (a lock of some kind): the edges that make a waiter wait for the sleeper.
HELD_KINDS = (WaitKind.MUTEX, WaitKind.RWLOCK_READ, WaitKind.RWLOCK_WRITE, WaitKind.RWLOCK, WaitKind.SEMAPHORE,
              WaitKind.GLIBC_INTERNAL, WaitKind.PY_LOCK, WaitKind.PY_RLOCK, WaitKind.PY_SEMAPHORE,
              WaitKind.PY_IMPORT_LOCK, WaitKind.PY_BUFFERED_IO, WaitKind.SQLITE_BUSY)

_SLEEPS = ("nanosleep", "clock_nanosleep")
_SELECTS = ("select", "pselect6", "poll", "ppoll")   # time.sleep before 3.11: select with no fds


def sleep_left(t):
    """{"call", "left_ns" or "requested_ns"} of thread `t` when it sleeps (a sleep, or a select or poll that
    watches no fd, with a timeout): how long it will still sleep (an absolute deadline on a clock read now),
    or how long the sleep was asked to last (a relative one: at most that is left); None when it does not
    sleep or the time is not known."""
    b = t.blocked_on
    if b is None or b.kind != WaitKind.SYSCALL:
        return None
    s = syscall_of(b)
    call = (s.restarts or {}).get("syscall") if s.name == "restart_syscall" else s.name
    if call not in _SLEEPS and not (call in _SELECTS and s.fds is not None and not s.fds):
        return None
    timeout = s.timeout or {}
    if timeout.get("ns") is None:
        return None
    if timeout.get("absolute"):
        return {"call": call, "left_ns": timeout["left_ns"]} if "left_ns" in timeout else None
    return {"call": call, "requested_ns": timeout["ns"]}


# Waits that only a signal ends (no timeout): the thread does nothing else until one comes.
_SIGNAL_WAITS = ("pause", "rt_sigsuspend", "rt_sigtimedwait")


def long_sleep(t):
    """{"call", "left_ns" or "requested_ns"} of thread `t` when it sleeps for at least LONG_SLEEP_NS more
    (sleep_left), {"call"} alone when it waits for a signal with no timeout (pause, sigsuspend, sigwait, a
    select of no fds): it serves nothing until then; else None."""
    sleep = sleep_left(t)
    if sleep is not None:
        ns = sleep.get("left_ns", sleep.get("requested_ns"))
        return sleep if ns is not None and ns >= LONG_SLEEP_NS else None
    b = t.blocked_on
    if b is None or b.kind != WaitKind.SYSCALL:
        return None
    s = syscall_of(b)
    call = (s.restarts or {}).get("syscall") if s.name == "restart_syscall" else s.name
    untimed = not s.timeout or s.timeout.get("ns") is None
    if untimed and (call in _SIGNAL_WAITS or (call in _SELECTS and s.fds is not None and not s.fds)):
        return {"call": call}
    return None


def unknown_sleepers(report):
    """The TIDs of threads others wait on for a lock they hold while they sleep until a deadline whose distance
    is not known (an absolute sleep read from a core that records no clock): whether the waiters are stuck, a
    core cannot say (analysis.account: unaccounted, never blocked on an owner that can progress)."""
    out = set()
    for e in report.edges:
        if e.kind not in HELD_KINDS or e.owner == e.waiter or e.owner in out:
            continue
        t = report.thread(e.owner)
        b = t.blocked_on if t is not None else None
        if b is None or b.kind != WaitKind.SYSCALL:
            continue
        s = syscall_of(b)
        call = (s.restarts or {}).get("syscall") if s.name == "restart_syscall" else s.name
        timeout = s.timeout or {}
        if call in _SLEEPS and timeout.get("absolute") and timeout.get("ns") is not None and "left_ns" not in timeout:
            out.add(e.owner)
    return out


def _behind(edges, stuck):
    """The threads every edge of which leads to a thread of `stuck` or to one of these (they wait, through a
    chain of held locks and joins, only for the sleepers): found from the sleepers outwards, each edge once."""
    waits_for = {}
    for e in edges:
        waits_for.setdefault(e.waiter, set()).add(e.owner)
    waiters_of = {}
    for waiter, owners in waits_for.items():
        for owner in owners:
            waiters_of.setdefault(owner, []).append(waiter)
    left = {w: len(o) for w, o in waits_for.items()}
    done, todo = set(stuck), list(stuck)
    while todo:
        for waiter in waiters_of.get(todo.pop(), ()):
            if waiter in done:
                continue
            left[waiter] -= 1
            if left[waiter] == 0:
                done.add(waiter)
                todo.append(waiter)
    return done - set(stuck)


def verdicts(report):
    """A held-across-sleep verdict for each thread that others wait on for a lock it holds while it sleeps for
    at least LONG_SLEEP_NS more; its threads are the sleeper, the threads waiting for its locks, and the
    threads waiting (only) on those.  A waiter in a deadlock is the cycle's, and a guessed holder (a Lock that
    records no owner) is one only when it is the waiter's one suspect: a sleeping thread that merely
    references the lock beside another suspect is not accused."""
    out = []
    cycled = {tid for d in report.deadlocks for tid in d.threads}   # their cycle explains their waits
    suspects = {}
    for e in report.edges:
        suspects.setdefault((e.waiter, e.address), set()).add(e.owner)
    held = {}
    for e in report.edges:
        # a guessed holder counts only as the waiter's one suspect for that lock
        if e.kind in HELD_KINDS and e.owner != e.waiter and e.waiter not in cycled and \
                (e.source != OwnerSource.HEURISTIC or len(suspects[(e.waiter, e.address)]) == 1):
            held.setdefault(e.owner, []).append(e)
    for tid, edges in sorted(held.items()):
        t = report.thread(tid)
        sleep = sleep_left(t) if t is not None else None
        ns = sleep and sleep.get("left_ns", sleep.get("requested_ns"))
        if ns is None or ns < LONG_SLEEP_NS:
            continue
        waiters = sorted({e.waiter for e in edges})
        behind = sorted(_behind(report.edges, {tid} | set(waiters)) - {tid})
        locks = list({(e.kind, e.address): HeldLock(e.kind, e.address, _name(report, e), e.source)
                      for e in edges}.values())
        frames = [f for f in t.python_frames if f.file]
        frame = program_frame(frames) or next(iter(frames), None)
        facts = HeldAcrossSleepFacts(**sleep, holder=tid, locks=locks, waiters=waiters, behind=behind,
                                     confidence=Confidence.LIKELY,
                                     frame=CodeLine(frame.function, frame.file, frame.line) if frame else None)
        out.append(Verdict(kind=VerdictKind.HELD_ACROSS_SLEEP, threads=[tid] + waiters + behind, facts=facts))
    return out


def _name(report, edge):
    """The variable that reaches the lock an edge waits for (its waiter's blocked_on.name), or None."""
    t = report.thread(edge.waiter)
    b = t.blocked_on if t is not None else None
    return b.name if b is not None and b.address == edge.address else None

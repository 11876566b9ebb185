"""The closed-world account of a process: every thread in exactly one
class (model.kinds.ThreadState), so that the all-clear is earned, never
given because no rule fired.

    running      in no blocking wait (on a CPU, or between two calls)
    idle         waits for work any thread or client may give (the idle and
                 pool-idle verdicts, a selector loop, accept, a signal), or
                 for a time (a wait with a timeout ends by itself)
    blocked      waits on threads of this process that hold what it wants
                 (an edge of the wait-for graph), none of them in a cycle
    deadlocked   in a cycle of the wait-for graph
    hung         named by a verdict of a hang without a cycle (starvation,
                 a blocked event loop, a Queue.get nothing can fill, ...)
    elsewhere    waits on an owner that is gone (a thread that exited
                 holding the lock, a lock copied locked by fork) or on
                 another process (a pipe's other end, a child, a file lock
                 another process holds, a socket's peer)
    unaccounted  waits on something pyhang cannot name or does not model:
                 the owners-unknown verdict's waits, and the waits this
                 module finds no class for, each with its raw facts in the
                 `unaccounted` verdict (the system call and its arguments,
                 the fd and what it is, the futex word, the innermost
                 native and Python frames)

The last four are problems: a report whose threads include one is never
an all-clear (analysis.completeness.report_status).  Plain Python over the
report: the verdicts are made first, the account reads them.
"""
from pyhang.analysis import deadlocks, grpc_calls, held, syscalls
from pyhang.model.kinds import HANG_VERDICTS, AccountReason, HazardKind, ThreadState, Unread, VerdictKind, \
    WaitKind
from pyhang.model.report import ThreadAccount, Verdict, entry_frame
from pyhang.model.verdict_facts import NativeCall, UnaccountedFacts, UnaccountedWait
from pyhang.model.waits import CodeLine
from pyhang.model.waits import syscall_of

# Verdicts whose threads wait on an owner that is gone: the wait cannot end, and the owner is no thread here.
_GONE_VERDICTS = (VerdictKind.OWNER_GONE, VerdictKind.HOLDER_EXITED)
_IDLE_VERDICTS = (VerdictKind.IDLE, VerdictKind.POOL_IDLE)

# System calls that wait for work any client may give, or for a signal.
_SELECTORS = ("epoll_wait", "epoll_pwait", "epoll_pwait2")
_POLLS = ("poll", "ppoll", "select", "pselect6")
_LISTENERS = ("accept", "accept4")
_SIGNAL_WAITS = ("pause", "rt_sigsuspend", "rt_sigtimedwait")
_SLEEPS = ("nanosleep", "clock_nanosleep")
_FD_CALLS = syscalls.READS + syscalls.WRITES + ("connect",)
# Objects behind an fd that a poll watches on a loop's behalf, never a peer's end (an epoll instance, an
# eventfd, a signalfd, a timerfd): a thread polling one waits for events, like a selector.
_EVENT_OBJECTS = ("anon",)
_TTY_PREFIXES = ("/dev/pts/", "/dev/tty", "/dev/console")


def _call_name(s):
    """The call a syscall wait is in: the one restart_syscall resumes, when known."""
    if s.name == "restart_syscall" and s.restarts:
        return s.restarts.get("syscall") or s.name
    return s.name


def timed(s):
    """Whether the wait has a finite timeout: it ends by itself."""
    return bool(s.timeout) and s.timeout.get("ns") is not None


def listening(obj):
    socket = (obj.socket or {}) if obj is not None else {}
    return socket.get("state") in ("LISTEN", 10)


def _other_end(obj, own):
    """(class, reason, pids) of a wait on a pipe or socket `obj` (an FdObject) of process `own`."""
    if obj.holders is None or not obj.holders_complete:
        return ThreadState.UNACCOUNTED, AccountReason.HOLDERS_UNKNOWN, []
    pids = sorted({h.pid for h in obj.holders})
    others = [p for p in pids if p != own]
    if others:
        return ThreadState.ELSEWHERE, AccountReason.OTHER_PROCESS, others
    if pids:
        return ThreadState.UNACCOUNTED, AccountReason.OWN_PROCESS, pids
    if obj.kind == "socket":
        return ThreadState.ELSEWHERE, AccountReason.PEER, []
    return ThreadState.UNACCOUNTED, AccountReason.NO_OTHER_END, []


def _watched(s, own):
    """(class, reason, pids) of a poll or select with no timeout, from the fds it watches."""
    if s.fds is None or not s.fd_table:
        return ThreadState.UNACCOUNTED, AccountReason.NO_FD_TABLE, []
    objects = [w.get("object") for w in s.fds]
    if not objects:
        return ThreadState.IDLE, AccountReason.SIGNAL, []
    if any(o is not None and (o.kind in _EVENT_OBJECTS or listening(o)) for o in objects):
        return ThreadState.IDLE, AccountReason.SELECTOR, []
    found = [_other_end(o, own) if o is not None and o.kind in ("pipe", "socket") else
             (ThreadState.UNACCOUNTED, AccountReason.NOT_MODELED, []) for o in objects]
    if all(c == ThreadState.ELSEWHERE for c, _, _ in found):
        return ThreadState.ELSEWHERE, AccountReason.OTHER_PROCESS, sorted({p for _, _, ps in found for p in ps})
    return next((f for f in found if f[0] == ThreadState.UNACCOUNTED), found[0])


def syscall_class(b, own):
    """(class, reason, pids) of a thread parked in a system call (`b`: its
    BlockedOn) of process `own` that no verdict speaks of."""
    s = syscall_of(b)
    call = _call_name(s)
    if call in _SLEEPS:
        return ThreadState.IDLE, AccountReason.TIMED, []
    if timed(s):
        # a poll with a timeout on pipes or sockets only other processes serve (a DataLoader's parent polling its
        # workers' pipe, 5 s at a time, in a loop) waits on them, timeout or not: whether it ends, they say
        if call in _POLLS and s.fds and s.fd_table:
            found = _watched(s, own)
            if found[0] == ThreadState.ELSEWHERE:
                return found
        elif call in _POLLS and s.fds:   # a core gdb or the kernel wrote: who serves those fds is not known
            return ThreadState.UNACCOUNTED, AccountReason.NO_FD_TABLE, []
        return ThreadState.IDLE, AccountReason.TIMED, []
    if call in _SELECTORS:
        return ThreadState.IDLE, AccountReason.SELECTOR, []
    if call in _LISTENERS:
        return ThreadState.IDLE, AccountReason.LISTENER, []
    if call in _SIGNAL_WAITS:
        return ThreadState.IDLE, AccountReason.SIGNAL, []
    if s.waits_for_child():
        return ThreadState.ELSEWHERE, AccountReason.CHILD, [s.child] if (s.child or 0) > 0 else []
    if call in _POLLS:
        return _watched(s, own)
    if call == "flock" or (call == "fcntl" and s.lock):
        if not s.fd_table:
            return ThreadState.UNACCOUNTED, AccountReason.NO_FD_TABLE, []
        pids = sorted({h.pid for h in s.lock_holders or () if h.pid > 0})
        others = [p for p in pids if p != own]
        if others:
            return ThreadState.ELSEWHERE, AccountReason.FILE_LOCK, others
        return ThreadState.UNACCOUNTED, AccountReason.OWN_PROCESS if pids else AccountReason.HOLDERS_UNKNOWN, pids
    if call in _FD_CALLS and s.has_fd():
        if not s.fd_table:
            return ThreadState.UNACCOUNTED, AccountReason.NO_FD_TABLE, []
        obj = s.object
        if obj is not None and obj.kind in ("pipe", "socket"):
            return _other_end(obj, own)
        if obj is not None and call in syscalls.READS and (obj.path or "").startswith(_TTY_PREFIXES):
            return ThreadState.IDLE, AccountReason.TERMINAL, []
    return ThreadState.UNACCOUNTED, AccountReason.NOT_MODELED, []


def _raw_wait(t, reason, pids, registers=None):
    """An unaccounted verdict's entry of thread `t`: its wait as pyhang read it, for the reader to judge."""
    b = t.blocked_on
    w = UnaccountedWait(tid=t.tid, reason=reason, kind=b.kind if b is not None else None,
                        address=b.address if b is not None else None, pids=list(pids))
    if b is not None and b.kind == WaitKind.SYSCALL:
        s = syscall_of(b)
        call = _call_name(s)
        w.call, w.fd = call, s.fd
        w.link = s.object.link if s.object is not None else None
        w.object_kind = s.object.kind if s.object is not None else None
        w.direction = "read" if call in syscalls.READS else "write" if call in syscalls.WRITES else None
        if registers:
            w.arguments = [registers.get(r) for r in syscalls.ARGUMENTS]
    elif registers:
        w.futex = syscalls.futex_address(registers)
    native = entry_frame(t.native_frames)
    w.native = NativeCall(function=native.function, library=native.library) if native is not None else None
    py = t.python_frames[0] if t.python_frames else None
    w.python = CodeLine(function=py.function, file=py.file, line=py.line) if py is not None else None
    return w


def _named(report):
    """{tid: (class, reason, finding, pids)} of the threads the deadlocks, verdicts and hazards already name."""
    out = {}

    def put(tids, state, reason, finding):
        for tid in tids:
            out.setdefault(tid, (state, reason, finding, []))

    for d in report.deadlocks:
        put(d.threads, ThreadState.DEADLOCKED, AccountReason.CYCLE, None)
    for h in report.fork_hazards:
        if h.hangs:
            put(h.threads, ThreadState.ELSEWHERE if h.kind == HazardKind.ORPHANED_LOCK else ThreadState.HUNG,
                AccountReason.OWNER_GONE if h.kind == HazardKind.ORPHANED_LOCK else AccountReason.FINDING, h.kind)
    for v in report.verdicts:
        if v.kind in _GONE_VERDICTS:
            put(v.threads, ThreadState.ELSEWHERE, AccountReason.OWNER_GONE, v.kind)
        elif v.kind in HANG_VERDICTS:
            put(v.threads, ThreadState.HUNG, AccountReason.FINDING, v.kind)
    for v in report.verdicts:
        if v.kind == VerdictKind.WAITS_ON_PROCESS:
            for w in v.facts.waits:
                out.setdefault(w.tid, (ThreadState.ELSEWHERE, AccountReason.CHILD if w.syscall in
                                       ("wait4", "waitid") else AccountReason.OTHER_PROCESS, v.kind,
                                       list(w.pids or ())))
        elif v.kind == VerdictKind.OWNERS_UNKNOWN:
            put(v.threads, ThreadState.UNACCOUNTED, AccountReason.OWNERS_UNKNOWN, v.kind)
        elif v.kind == VerdictKind.INCOMPLETE and v.facts.unread == Unread.LOCK_LAYOUTS:
            put(v.threads, ThreadState.UNACCOUNTED, AccountReason.UNREAD, v.kind)
        elif v.kind in _IDLE_VERDICTS:
            # (a pool-idle verdict's workers wait in a native pool, none in a Pool's loop)
            pool = {w.tid for w in v.facts.waits if w.pool_loop} if v.kind == VerdictKind.IDLE else ()
            put([t for t in v.threads if t in pool], ThreadState.IDLE, AccountReason.POOL_WORK, v.kind)
            put(v.threads, ThreadState.IDLE, AccountReason.WAITS_FOR_WORK, v.kind)
        elif v.kind == VerdictKind.GIL_HANDOVER:
            put(v.threads, ThreadState.RUNNING, AccountReason.GIL_FREE, v.kind)
    return out


def analyse(report, registers=None):
    """Give every thread of `report` its ThreadAccount, and add the
    `unaccounted` verdict for the problem waits no finding says yet (each
    with its raw facts).  `registers`: {tid: registers} of the threads, for
    the raw arguments of what is not modelled."""
    registers = registers or {}
    own = report.target.pid
    named = _named(report)
    owners = {}
    for e in report.edges:
        owners.setdefault(e.waiter, []).append(e.owner)
    unsaid = []
    sleepers = held.unknown_sleepers(report) if any(owners.values()) else set()
    for t in report.threads:
        b = t.blocked_on
        state, reason, finding, pids = named.get(t.tid, (None, None, None, []))
        if state is None:
            if b is None:
                state, reason = ThreadState.RUNNING, AccountReason.ON_CPU
            elif t.tid in owners and set(owners[t.tid]) <= sleepers:
                state, reason = ThreadState.UNACCOUNTED, AccountReason.SLEEP_UNKNOWN   # (a core: no clock)
            elif t.tid in owners:
                state, reason = ThreadState.BLOCKED, AccountReason.OWNER
            elif b.kind == WaitKind.SYSCALL:
                state, reason, pids = syscall_class(b, own)
            elif b.kind == WaitKind.GRPC_CALL:
                state, reason, pids = grpc_calls.account_class(b, own)
            elif b.owners and b.owner_alive is not False:
                state, reason = ThreadState.BLOCKED, AccountReason.OWNER
            elif b.kind == WaitKind.GIL and deadlocks.gil_moved(report):
                state, reason = ThreadState.RUNNING, AccountReason.GIL_FREE   # the GIL changes hands: it runs
            elif syscalls.timed_futex_wait(registers.get(t.tid)):
                state, reason = ThreadState.IDLE, AccountReason.TIMED   # acquire(timeout=...): ends by itself
            else:
                state, reason = ThreadState.UNACCOUNTED, AccountReason.NOT_MODELED
            if state == ThreadState.UNACCOUNTED and reason == AccountReason.NOT_MODELED and \
                    syscalls.shared_futex_wait(registers.get(t.tid)):
                reason = AccountReason.SHARED_FUTEX   # its owner may be another process: a second look cannot judge it
            if state in ThreadState.PROBLEMS:
                w = _raw_wait(t, reason, pids, registers.get(t.tid))
                if reason == AccountReason.SLEEP_UNKNOWN:
                    w.sleepers = sorted(set(owners[t.tid]))
                unsaid.append(w)
                finding = VerdictKind.UNACCOUNTED
        elif reason == AccountReason.OWNERS_UNKNOWN and syscalls.shared_futex_wait(registers.get(t.tid)):
            reason = AccountReason.SHARED_FUTEX
        waits_for = sorted(dict.fromkeys(owners.get(t.tid, ()))) if state in (ThreadState.BLOCKED,
                                                                             ThreadState.DEADLOCKED) else []
        t.account = ThreadAccount(state=state, reason=reason, finding=finding, threads=waits_for, pids=pids)
    if unsaid:
        report.verdicts.append(Verdict(kind=VerdictKind.UNACCOUNTED, threads=[w.tid for w in unsaid],
                                       facts=UnaccountedFacts(waits=unsaid)))
    return report


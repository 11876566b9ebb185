"""x86_64 system calls: the name of every one, and what a thread parked in
a blocking one waits for.

A thread stopped inside a system call has its number in orig_rax (-1
otherwise) and its arguments in rdi, rsi, rdx, r10, r8, r9 (the kernel's
x86_64 calling convention).  Arguments that point into target memory (a
pollfd array, fd_sets, a timespec) are read by the native side when the
collection asks (`memory_wanted`); the objects behind file descriptors are
read from /proc for live targets (pyhang.procfs, `fds_wanted`).  From all of
it, `syscall_wait` makes the thread's BlockedOn (kind "syscall").
"""
from pyhang.analysis.syscall_names import NAMES
from pyhang.libraries import GLIBC_LIBRARIES, is_one_of
from pyhang.model.files import FdObject
from pyhang.model.kinds import Confidence, OwnerSource, WaitKind
from pyhang.model.record import replace
from pyhang.model.report import BlockedOn
from pyhang.model.verdict_facts import ProcessPeer, ProcessWait
from pyhang.model.waits import HolderThreadWait, SyscallFacts, SyscallWait, syscall_of

ARGUMENTS = ("rdi", "rsi", "rdx", "r10", "r8", "r9")

FUTEX = 202
RESTART = 219
_NUMBERS = {name: nr for nr, name in NAMES.items()}

# What the argument registers of the blocking calls mean (Linux man-pages
# section 2).  Roles: "fd" a file descriptor the call waits on, "pollfds"
# and "npoll" a pollfd array and its length, "nfds"/"readfds"/"writefds"/
# "exceptfds" select's bitmaps, "epfd" an epoll instance, "timeout_ms" an
# int in milliseconds (negative: none), "timespec"/"timeval" a pointer to one
# (NULL: no timeout), "clockid", "flags", "pid" (wait4), "idtype"/"id"
# (waitid), "lock_op" (flock), "cmd" and "flock" (fcntl: its struct flock).
_ROLES = {
    "read": ("fd",), "readv": ("fd",), "pread64": ("fd",), "preadv": ("fd",), "preadv2": ("fd",),
    "write": ("fd",), "writev": ("fd",), "pwrite64": ("fd",), "pwritev": ("fd",), "pwritev2": ("fd",),
    "recvfrom": ("fd",), "recvmsg": ("fd",), "recvmmsg": ("fd",),
    "sendto": ("fd",), "sendmsg": ("fd",), "sendmmsg": ("fd",),
    "accept": ("fd",), "accept4": ("fd",), "connect": ("fd",),
    "poll": ("pollfds", "npoll", "timeout_ms"),
    "ppoll": ("pollfds", "npoll", "timespec"),
    "select": ("nfds", "readfds", "writefds", "exceptfds", "timeval"),
    "pselect6": ("nfds", "readfds", "writefds", "exceptfds", "timespec"),
    "epoll_wait": ("epfd", None, None, "timeout_ms"),
    "epoll_pwait": ("epfd", None, None, "timeout_ms"),
    "epoll_pwait2": ("epfd", None, None, "timespec"),
    "wait4": ("pid",),
    "waitid": ("idtype", "id"),
    "flock": ("fd", "lock_op"),
    "fcntl": ("fd", "cmd", "flock"),
    "nanosleep": ("timespec",),
    "clock_nanosleep": ("clockid", "flags", "timespec"),
    "rt_sigtimedwait": (None, None, "timespec"),
    "pause": (), "rt_sigsuspend": (), "restart_syscall": (),
    "msgrcv": (), "msgsnd": (), "semop": (), "semtimedop": (), "mq_timedreceive": (), "mq_timedsend": (),
    "io_getevents": (), "io_pgetevents": (), "io_uring_enter": (), "futex": (), "futex_wait": (),
    "futex_waitv": (), "splice": (), "tee": (), "sendfile": (), "open": (), "openat": (), "openat2": (),
    "sync": (), "fsync": (), "fdatasync": (), "msync": (),
    "vfork": (),   # the parent waits, as no signal ends, until its child execs or exits (CHILD_CALLS)
}
# Every blocking call, by number: a thread in one of these is parked.
BLOCKING = {_NUMBERS[name] for name in _ROLES if name in _NUMBERS}

# What an fd-taking call does on its fd: the renderer's verb.
READS = ("read", "readv", "pread64", "preadv", "preadv2", "recvfrom", "recvmsg", "recvmmsg")
WRITES = ("write", "writev", "pwrite64", "pwritev", "pwritev2", "sendto", "sendmsg", "sendmmsg")

F_SETLKW, F_OFD_SETLKW = 7, 38                    # <asm-generic/fcntl.h>
FLOCK_TYPES = {0: "read", 1: "write", 2: "unlock"}   # F_RDLCK, F_WRLCK, F_UNLCK
WHENCE = {0: "start", 1: "current", 2: "end"}       # SEEK_SET, SEEK_CUR, SEEK_END
LOCK_SH, LOCK_EX = 1, 2                           # <asm-generic/fcntl.h>: flock(2)'s operations
TIMER_ABSTIME = 1                                 # <linux/time.h>
P_ALL, P_PID, P_PGID, P_PIDFD = 0, 1, 2, 3        # <linux/wait.h>
CLOCKS = {0: "CLOCK_REALTIME", 1: "CLOCK_MONOTONIC", 7: "CLOCK_BOOTTIME", 11: "CLOCK_TAI"}   # <linux/time.h>
MAX_SELECT_FDS = 1024                             # __FD_SETSIZE


def timed_futex_wait(registers):
    """Whether a thread sleeps in a futex wait with a timeout (its fourth argument, r10, a timespec; a
    wait the kernel resumes through restart_syscall is one too): a lock's acquire(timeout=...), a
    Condition's or Event's wait(timeout): it ends by itself."""
    r = registers or {}
    nr = in_syscall(r)
    if nr == RESTART:
        return True
    return nr == FUTEX and (r.get("rsi", 0) & 0x7f) in _FUTEX_WAIT_CMDS and bool(r.get("r10"))


FUTEX_PRIVATE_FLAG = 128                          # <linux/futex.h>


def shared_futex_wait(registers):
    """Whether a thread sleeps in a futex wait on a process-shared word (no FUTEX_PRIVATE_FLAG in its op:
    a multiprocessing Lock or Semaphore, a pshared mutex or sem_t): another process may wake it."""
    r = registers or {}
    op = r.get("rsi", 0)
    return in_syscall(r) == FUTEX and (op & 0x7f) in _FUTEX_WAIT_CMDS and not op & FUTEX_PRIVATE_FLAG


def in_syscall(registers):
    """The system call number a thread is stopped in, or None."""
    nr = registers.get("orig_rax")
    if nr is None or nr >= 1 << 63 or nr == 0xFFFFFFFFFFFFFFFF:
        return None
    return nr


def name(nr):
    """The name of system call `nr`; for a number no x86_64 kernel has, the
    number itself (the renderer says it is one: render.syscalls.call_name)."""
    return NAMES.get(nr) or nr


def futex_address(registers):
    """The futex word a thread sleeps on, when it is in futex(2)."""
    if in_syscall(registers) == FUTEX:
        return registers.get("rdi")
    return None


def _signed(value, bits=64):
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def arguments(registers, syscall):
    """{role: value} of the argument registers of `syscall` (a name)."""
    out = {}
    for role, reg in zip(_ROLES.get(syscall, ()), ARGUMENTS):
        if role is not None and reg in registers:
            out[role] = registers[reg]
    return out


def parked(registers):
    """(number, name) of the blocking call a thread is parked in (not a
    futex: the lock decoders answer for those), or None."""
    nr = in_syscall(registers)
    if nr is None or nr == FUTEX or nr not in BLOCKING:
        return None
    return nr, NAMES[nr]


def memory_wanted(registers):
    """What to read from target memory for this thread's call: a list of
    (label, reader, args) with reader one of "pollfds" (address, count),
    "fd_set" (address, nfds), "timespec" (address), "timeval" (address) —
    the native readers of the same names."""
    found = parked(registers)
    if found is None:
        return []
    args = arguments(registers, found[1])
    out = []
    if args.get("pollfds"):
        out.append(("pollfds", "pollfds", (args["pollfds"], args.get("npoll", 0))))
    nfds = _signed(args.get("nfds", 0), 32)
    for which in ("readfds", "writefds", "exceptfds"):
        if args.get(which) and 0 < nfds <= MAX_SELECT_FDS:
            out.append((which, "fd_set", (args[which], nfds)))
    for kind in ("timespec", "timeval"):
        if args.get(kind):
            out.append(("timeout", kind, (args[kind],)))
    if found[1] == "fcntl" and args.get("cmd") in (F_SETLKW, F_OFD_SETLKW) and args.get("flock"):
        out.append(("flock", "flock", (args["flock"],)))
    return out


def clock_wanted(registers):
    """The clock whose time now says how long an absolute sleep has left
    (clock_nanosleep with TIMER_ABSTIME), or None."""
    found = parked(registers)
    if found is None or found[1] != "clock_nanosleep":
        return None
    args = arguments(registers, found[1])
    return args.get("clockid") if args.get("flags", 0) & TIMER_ABSTIME else None


def _watched(args, memory):
    """[(fd, direction)] a poll or select watches, from what was read; None
    when it could not be read."""
    if "pollfds" in args:
        fds = memory.get("pollfds")
        if fds is None:
            return None
        # POLLIN 0x1, POLLPRI 0x2, POLLOUT 0x4 (<asm-generic/poll.h>)
        return [(fd, "read" if events & 3 and not events & 4 else "write" if events & 4 and not events & 3
                 else "read-write") for fd, events in fds if fd >= 0]
    if "nfds" in args:
        sets = [(memory.get(k), d) for k, d in (("readfds", "read"), ("writefds", "write"),
                                                 ("exceptfds", "except"))]
        if any(args.get(k) and memory.get(k) is None for k in ("readfds", "writefds", "exceptfds")):
            return None
        out = {}
        for fds, direction in sets:
            for fd in fds or ():
                out[fd] = direction if fd not in out else "read-write"
        return sorted(out.items())
    return []


def fds_wanted(registers, memory):
    """The fds whose objects the wait names (for /proc/PID/fd), epoll
    instances included."""
    found = parked(registers)
    if found is None:
        return []
    args = arguments(registers, found[1])
    fds = [_signed(args[r], 32) for r in ("fd", "epfd") if r in args]
    fds.extend(fd for fd, _ in _watched(args, memory or {}) or ())
    return sorted({fd for fd in fds if fd >= 0})


def _timeout(syscall, args, memory, clock_now=None):
    """{"ns": duration, "absolute": bool, "clock": name} of the call's
    timeout, {"ns": None} for none (it waits for ever), or None when it
    could not be read."""
    if "timeout_ms" in args:
        ms = _signed(args["timeout_ms"], 32)
        return {"ns": None} if ms < 0 else {"ns": ms * 1000000}
    pointer = args.get("timespec") or args.get("timeval")
    if pointer is None and not any(k in args for k in ("timespec", "timeval")):
        return None
    if not pointer:
        return {"ns": None}
    value = memory.get("timeout")
    if value is None:
        return None
    out = {"ns": value[0] * 1000000000 + value[1]}
    if syscall == "clock_nanosleep":
        out["clock"] = CLOCKS.get(args.get("clockid"), "clock %d" % args.get("clockid", -1))
        out["absolute"] = bool(args.get("flags", 0) & TIMER_ABSTIME)
        if out["absolute"] and clock_now is not None:
            out["left_ns"] = max(0, out["ns"] - clock_now)
    return out


def _object(fd, files):
    """What /proc says fd is (an FdObject), or None when the target's fd
    table is not known (`files` None: a core)."""
    if files is None:
        return None
    return files.get(fd) or FdObject(kind="closed")


# Names of the libc functions a timed futex wait sleeps in (after "__GI_" and
# leading underscores): futex wrappers and the lock functions around them
# (the native frame hints, pyhang/glibc/identify.cpp).
_FUTEX_FUNCTIONS = ("futex_", "lll_", "sem_", "new_sem_", "old_sem_", "do_futex_wait", "pthread_cond_",
                    "condvar_", "pthread_mutex_", "pthread_rwlock_", "pthread_join", "pthread_clockjoin",
                    "pthread_timedjoin")
_FUTEX_WAIT_CMDS = (0, 9, 11)   # FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI (op & 0x7f)


def _bare_function(name):
    name = (name or "").split("@")[0]
    while name.startswith("__GI_"):
        name = name[5:]
    return name.lstrip("_")


# glibc's cancellable system calls (2.41+) make the call inside these helpers, below the wrapper that names it.
_CANCEL_HELPERS = ("syscall_cancel", "internal_syscall_cancel", "syscall_cancel_arch")

# Frames looked at from the innermost for the libc function that made a call.
CALL_FRAMES = 4


def call_functions(frames):
    """The bare names of the innermost native frames that can be the libc
    function making the thread's system call: the frames in the C library
    from frame 0 (at most CALL_FRAMES), leaving out the ones no symbol names
    (a static function of a stripped libc) and glibc's cancellation helpers."""
    out = []
    for f in frames[:CALL_FRAMES]:
        if f.library and not is_one_of(f.library, GLIBC_LIBRARIES):
            break
        fn = _bare_function(f.function)
        if fn and fn not in _CANCEL_HELPERS:
            out.append(fn)
    return out


def futex_wait_candidate(registers):
    """The futex word of a call resumed through restart_syscall that may be
    a futex wait no frame names (a wait op, an aligned word), or None: it is
    one when the word still holds the value the wait expected (rdx), as it
    does while the thread sleeps (resumed_futex)."""
    if in_syscall(registers) != RESTART or (registers.get("rsi", 0) & 0x7f) not in _FUTEX_WAIT_CMDS:
        return None
    word = registers.get("rdi") or 0
    return word if word and word % 4 == 0 else None


def resumed_futex(registers, word):
    """`registers` as of a futex wait (resumed, likely) when the futex word
    at futex_wait_candidate still holds the value the wait expected."""
    if word is None or word != (registers.get("rdx", 0) & 0xFFFFFFFF):
        return registers
    return dict(registers, orig_rax=FUTEX, restarted=True)


def resumed(registers, frames):
    """`registers` as of the call a thread resumes through restart_syscall:
    a stop (an attach, a signal) interrupted a timed futex wait, poll or
    sleep, and the kernel resumes it with the call's own arguments still in
    the argument registers.  The call is named by the libc function that
    made it (call_functions: frame 0, or the wrapper above glibc's unnamed
    or cancellation frames); a futex wait also needs a wait op and an
    aligned word.
    The copy has the resumed call's number in orig_rax and "restarted":
    True; registers of any other thread are returned as they are."""
    if in_syscall(registers) != RESTART:
        return registers
    for fn in call_functions(frames)[:2]:
        if fn.startswith(_FUTEX_FUNCTIONS):
            if (registers.get("rsi", 0) & 0x7f) in _FUTEX_WAIT_CMDS and registers.get("rdi", 1) % 4 == 0:
                return dict(registers, orig_rax=FUTEX, restarted=True)
            return registers
        if fn in _ROLES and fn != "restart_syscall" and fn in _NUMBERS:
            return dict(registers, orig_rax=_NUMBERS[fn], restarted=True)
    return registers


def _restarted(thread, facts):
    """What restart_syscall restarts: the kernel's record for a live
    thread (/proc/PID/task/TID/syscall) when it names another call, else
    the libc function that made the call (call_functions; likely), else None."""
    nr = facts.proc_syscall
    if nr is not None and nr != RESTART and nr in NAMES:
        return {"syscall": NAMES[nr], "source": "proc"}
    for fn in call_functions(thread.frames)[:2]:
        if fn in _ROLES and fn != "restart_syscall":
            return {"syscall": fn, "source": "frame"}
    return None


def _reported(obj, calls=True):
    """The FdObject a report holds of `obj`: the /proc facts of the other
    end's holders, their threads' system calls named (`calls`: for the fd a
    call waits on, not for each fd a poll watches); `relevant` marks a
    thread parked on one of the holder's fds for that object, or waiting
    for a child.  A lookup not made stays none (never "nobody")."""
    if obj is None or obj.holders is None:
        return obj
    return replace(obj, holders=[replace(h, threads=[_holder_thread(t, h, obj.pid) if calls else
                                                     HolderThreadWait(tid=t.tid, comm=t.comm) for t in h.threads])
                                 for h in obj.holders])


def _holder_thread(t, h, fd_pid):
    """HolderThreadWait of thread `t` (HolderThread) of holder `h` (FdHolder)."""
    out = HolderThreadWait(tid=t.tid, comm=t.comm)
    nr, args = t.nr, t.args or [0]
    if nr is not None:
        out.syscall = name(nr)
        if NAMES.get(nr) == "wait4":
            out.pid = _signed(args[0], 32)
        # parked on the holder's fd for the object, or waiting for
        # the process whose thread waits on the object
        out.relevant = nr in BLOCKING and nr != FUTEX and (
            _signed(args[0], 32) in h.fds or (out.pid in (-1, fd_pid) and h.pid != fd_pid))
    return out


def _peers(objects):
    """The ProcessPeers holding the other ends of `objects` (FdObjects), each once, by PID."""
    out = {}
    for obj in objects:
        for h in obj.holders or ():
            out.setdefault(h.pid, ProcessPeer(pid=h.pid, comm=h.comm, title=h.title))
    return [out[pid] for pid in sorted(out)]


def _polled_elsewhere(s, own):
    """The FdObjects a poll or select with no timeout watches when every one of them is a pipe or socket whose
    other end only other processes hold (all of them found): nothing in this process can end the wait; else
    None."""
    if not s.watches_fds or s.fds is None or not s.fds or (s.timeout or {}).get("ns") is not None:
        return None
    objects = [w["object"] for w in s.fds]
    if any(o is None or o.kind not in ("pipe", "socket") or not o.holders or not o.holders_complete or
           own in {h.pid for h in o.holders} for o in objects):
        return None
    return objects


def waits_on_processes(report):
    """The threads parked on a pipe or socket whose other end only other
    processes hold (all of them found) — read, write, or a poll or select
    with no timeout all of whose fds are such —, or waiting for one child to
    exit: what they wait for is beyond this report, and `--tree` from
    `root` examines them together.  Facts of the waits-on-process verdict,
    or None: {"waits": [ProcessWait], "root": the process to examine with
    its descendants, "outside": the holders known to be in no tree from
    root}; a wait for a child has no fd and link; `peers`: the processes at
    the other end (a server's title may say its state)."""
    own = report.target.pid
    waits = []
    lineage = {}   # pid → its ancestors, of the holders whose parents are known
    for t in report.threads:
        b = t.blocked_on
        s = syscall_of(b)
        if s.waits_for_child() and (s.child or 0) > 0:
            waits.append(ProcessWait(tid=t.tid, syscall=s.name, fd=None, link=None, pids=[s.child], peers=[]))
            continue
        obj = s.object
        polled = _polled_elsewhere(s, own)
        for o in polled or ([obj] if obj is not None else []):
            lineage.update((h.pid, h.ancestors) for h in o.holders or () if h.ancestors)
        if polled is not None:
            one = s.fds[0] if len(s.fds) == 1 else None
            peers = _peers(polled)
            waits.append(ProcessWait(tid=t.tid, syscall=s.name, fd=one["fd"] if one else None,
                                     link=one["object"].link if one else None, pids=[p.pid for p in peers],
                                     peers=peers))
            continue
        if obj is None or obj.kind not in ("pipe", "socket") or not obj.holders or not obj.holders_complete:
            continue
        pids = sorted({h.pid for h in obj.holders})
        if own in pids:
            continue
        waits.append(ProcessWait(tid=t.tid, syscall=s.name, fd=s.fd, link=obj.link, pids=pids, peers=_peers([obj])))
    if not waits:
        return None
    others = {pid for w in waits for pid in w.pids}
    parent = report.target.parent_pid
    # the parent's tree holds this process and its siblings; else this process's own descendants
    root = parent if parent and parent > 1 and (parent in others or any(
        parent in lineage[pid] and own not in lineage[pid] for pid in others if pid in lineage)) else own
    # a holder whose parents are known and lead to no root is a process no tree from it holds (a server
    # started apart)
    outside = sorted(pid for pid in others if pid in lineage and pid != root and root not in lineage[pid])
    return {"waits": waits, "root": root, "outside": outside}


def _lock_range(flock):
    """{type, whence, start, length} of the struct flock an fcntl lock wait was read with (native read_flock's
    tuple), or None when it could not be read."""
    if not flock:
        return None
    kind, whence, start, length = flock[:4]
    return {"type": FLOCK_TYPES.get(kind, kind), "whence": WHENCE.get(whence, whence), "start": start,
            "length": length}


def syscall_wait(thread, files=None):
    """The BlockedOn of a thread (ThreadSnapshot) parked in a blocking
    system call other than futex, or None.  `files`: {fd: FdObject} from
    /proc (model.files), None for a core."""
    found = parked(thread.registers)
    if found is None:
        return None
    nr, call = found
    facts = thread.syscall or SyscallFacts()
    memory = facts.memory or {}
    args = arguments(thread.registers, call)
    s = SyscallWait(name=call, number=nr, fd_table=files is not None)
    if "fd" in args or "epfd" in args:
        s.fd = _signed(args.get("fd", args.get("epfd", 0)), 32)
        s.object = _reported(_object(s.fd, files))
    watched = _watched(args, memory)
    if "pollfds" in args or "nfds" in args:
        s.watches_fds = True
        s.fds = None if watched is None else [
            {"fd": fd, "direction": d, "object": _reported(_object(fd, files), calls=False)} for fd, d in watched[:64]]
        s.fds_count = None if watched is None else len(watched)
    s.timeout = _timeout(call, args, memory, facts.clock_now_ns)
    if call == "wait4":
        s.child = _signed(args.get("pid", 0), 32)
    elif call == "waitid":
        idtype, ident = args.get("idtype"), _signed(args.get("id", 0), 32)
        s.child = ident if idtype == P_PID else -1 if idtype == P_ALL else None
        if idtype == P_PGID:
            s.group = ident
    elif call == "vfork":   # its child: the one process the thread made and has not reaped, where /proc says
        s.child = facts.children[0] if facts.children and len(facts.children) == 1 else None
    elif call == "fcntl":
        s.lock = args.get("cmd") in (F_SETLKW, F_OFD_SETLKW)
        s.lock_ofd = args.get("cmd") == F_OFD_SETLKW if s.lock else None
        s.lock_range = _lock_range(memory.get("flock")) if s.lock else None
    elif call == "flock":
        op = args.get("lock_op", 0) & 3
        s.lock_mode = "exclusive" if op == LOCK_EX else "shared" if op == LOCK_SH else None
    elif call == "restart_syscall":
        s.restarts = _restarted(thread, facts)
    if s.has_fd() and s.object is not None and call in ("flock", "fcntl"):
        s.lock_holders = list(s.object.lock_holders or [])
    confidence = Confidence.CERTAIN
    if thread.registers.get("restarted"):   # the call named from frame 0 (resumed)
        s.restarted = True
        confidence = Confidence.LIKELY
    if call == "restart_syscall" and (s.restarts or {}).get("source") == "frame":
        confidence = Confidence.LIKELY
    return BlockedOn(kind=WaitKind.SYSCALL, owner_source=OwnerSource.UNKNOWN, confidence=confidence, syscall=s)


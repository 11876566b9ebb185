"""The facts of each verdict kind (model.kinds.VerdictKind), one record per
kind: what the analysis concluded the verdict from, and what render words
its sentence and the JSON's `facts` from.  `FACTS` names the record of every
kind; a verdict's JSON `facts` is to_data() of it, in field order.

A field in a record's `__optional__` is one the JSON carries only at times,
as the analysis has always written them: `moved` (every kind's) only after
a second look saw some of the verdict's threads move (analysis.progress),
the others as each record says.  The entries of their lists are records
too (a wait, a worker, a group of ranks, a dead process, a lock held across
a sleep: below), each with its keys in the order the JSON has always given
them, and left out where it has always left them out.  Data written before
these records (a verdict whose facts are a dict) is read by
`facts_from_data`."""
from __future__ import annotations

from pyhang.model.kinds import Unread, VerdictKind, WaitKind
from pyhang.model.record import field, from_data, record
from pyhang.model.references import ObjectPath
from pyhang.model.waits import CodeLine


def _none(name):
    """The test of a field left out while it is None (present, it is never null)."""
    def test(r):
        return getattr(r, name) is None
    test.while_none = True
    return test


_NOT_MOVED = _none("moved")


def _not_syscall(r):
    """The test of a field a wait carries only when it is a system call's."""
    return r.kind != WaitKind.SYSCALL


# --- the entries of the facts' lists

@record
class UnknownOwnerWait:
    """An owners-unknown verdict's wait of one thread: what it waits on, and
    for a system call the call and the link of the fd it is parked on."""
    tid: int
    kind: str                            # model.kinds.WaitKind
    address: int | None
    name: ObjectPath | None              # the variable that reaches the object (worded in the JSON)
    call: str | None = None              # a system call's name
    link: str | None = None              # a system call's fd: its link ("pipe:[42]")

    __optional__ = {"call": _not_syscall, "link": _not_syscall}
    __nested__ = {"name": ObjectPath}


@record
class IdleWait:
    """An idle verdict's wait of one thread (analysis.idle.idle_waits): an
    Event, Condition or Queue.get anyone may end, a ThreadPoolExecutor
    worker's wait on its work queue, or a multiprocessing Pool's loop."""
    tid: int
    kind: str
    address: int | None
    name: ObjectPath | None
    work_queue: int | None               # a ThreadPoolExecutor worker's: its pool's work queue
    pool_loop: str | None = None         # a Pool's: the loop it waits in ("worker", "_handle_results", ...)

    __optional__ = {"pool_loop": _none("pool_loop")}
    __nested__ = {"name": ObjectPath}


@record
class PoolWorker:
    """A pool-idle verdict's thread: a native thread pool's worker waiting for work, and that pool's library."""
    tid: int
    library: str | None


@record
class ProcessPeer:
    """A process at the other end of a wait on processes: its command, and the title a server shows its state in."""
    pid: int
    comm: str | None = None
    title: str | None = None


@record
class CollectiveWait:
    """A torch.distributed collective a waits-on-process wait is in (analysis.collectives.collective_waits)."""
    function: str | None                 # None: a gloo worker's, in `transport`
    line: int | None
    backend: str | None
    rank: int | None
    world_size: int | None
    transport: str | None                # gloo's transport function it waits in for a peer


@record
class GrpcTargets:
    """A gRPC call's wait on processes: the peer address of each of its connections."""
    targets: list[str | None] = field(default_factory=list)


@record
class ProcessWait:
    """A waits-on-process verdict's wait of one thread: a pipe or socket
    only other processes hold the other end of, a child to exit, a
    collective, a gRPC call.  A wait for a child has no fd and link; a
    collective's has no peers."""
    tid: int
    syscall: str | None
    fd: int | None
    link: str | None
    pids: list[int]                      # the processes that can end it
    peers: list[ProcessPeer] | None = None
    collective: CollectiveWait | None = None
    grpc: GrpcTargets | None = None

    __optional__ = {"peers": _none("peers"), "collective": _none("collective"), "grpc": _none("grpc")}
    __nested__ = {"peers": ProcessPeer, "collective": CollectiveWait, "grpc": GrpcTargets}


@record
class PoolResultWait:
    """A pool-task-lost verdict's thread waiting for a Pool's result, at its frame in pool.py."""
    tid: int
    function: str | None
    line: int | None


@record
class ServedWait:
    """A server-died verdict's wait: a pipe or socket whose holders (PIDs) a dead process would have served."""
    tid: int
    syscall: str | None
    fd: int | None
    kind: str                            # the fd's kind: pipe or socket
    link: str | None
    holders: list[int]
    dead: list[int]                      # the dead processes that would have served it


@record
class DeadServer:
    """A server-died verdict's dead process: how it ended (model.tree.ProcessExit's), and why it most likely
    served the waits (model.kinds.ServerEvidence; `siblings`, the fork children like it that hold the other end)."""
    pid: int
    parent_pid: int | None
    comm: str | None
    wait_status: int | None
    status: int | None
    signal: int | None
    core_dumped: bool
    evidence: str
    siblings: list[int] = field(default_factory=list)


@record
class Rank:
    """A rank of a collective-mismatch verdict's group: its process, thread, rank (None: not read), and line."""
    pid: int
    tid: int
    rank: int | None
    line: int | None


@record
class RankGroup:
    """The ranks of a collective-mismatch verdict waiting in one collective."""
    function: str
    ranks: list[Rank] = field(default_factory=list)

    __nested__ = {"ranks": Rank}


@record
class LayoutsWait:
    """An incomplete (lock-layouts) verdict's thread asleep in futex(2) on a word no decoder identified."""
    tid: int
    futex: int


@record
class StillRead:
    """What an incomplete report still holds (analysis.completeness.still_read): the threads whose native
    stacks, system-call waits and lock waits were read, the Python state's status, whether glibc's lock
    layouts are known, and the deadlocks found."""
    native_stacks: list[int] = field(default_factory=list)
    syscall_waits: list[int] = field(default_factory=list)
    lock_waits: list[int] = field(default_factory=list)
    python_status: str | None = None
    lock_layouts: bool = False
    deadlocks: int = 0


@record
class NativeCall:
    """The native function a thread waits in, and its library."""
    function: str | None
    library: str | None


@record
class UnaccountedWait:
    """An unaccounted verdict's wait of one thread, with its raw facts (analysis.account): why no class
    explains it (model.kinds.AccountReason), what it waits on, the processes that may end it, for a system
    call the call and its fd, else the futex word it sleeps on when known, and its innermost frames."""
    tid: int
    reason: str
    kind: str | None = None
    address: int | None = None
    pids: list[int] = field(default_factory=list)
    call: str | None = None              # a system call's: its name
    fd: int | None = None
    link: str | None = None
    object_kind: str | None = None       # the fd's kind (pipe, socket, ...)
    direction: str | None = None         # "read", "write" or None
    arguments: list[int | None] | None = None   # the call's raw arguments, when the registers were read
    futex: int | None = None             # not a system call: the futex word it sleeps on
    native: NativeCall | None = None     # its innermost native function
    python: CodeLine | None = None       # its innermost Python frame
    sleepers: list[int] | None = None    # reason sleep-unknown: the holders that sleep until a deadline

    __optional__ = {"call": _not_syscall, "fd": _not_syscall, "link": _not_syscall, "object_kind": _not_syscall,
                    "direction": _not_syscall, "arguments": _none("arguments"), "futex": _none("futex"),
                    "sleepers": _none("sleepers")}
    __nested__ = {"native": NativeCall, "python": CodeLine}


@record
class HeldLock:
    """A lock a held-across-sleep verdict's holder holds (analysis.held): what it is, the variable that
    reaches it, and how its owner was found (model.kinds.OwnerSource: `heuristic`, a guessed holder)."""
    kind: str                            # model.kinds.WaitKind
    address: int | None
    name: ObjectPath | None              # (worded in the JSON)
    source: str

    __nested__ = {"name": ObjectPath}


# --- the facts of each kind


@record
class GilNobodyHoldsFacts:
    """Every Python thread waits for a GIL no thread holds (the verdict's threads say which)."""
    moved: list[int] | None = None   # the verdict's threads a second look saw move; None: none, or no second look

    __optional__ = {"moved": _NOT_MOVED}


@record
class GilHandoverFacts:
    """The GIL is free and some threads wait for it, while other Python threads do not: a hand-over."""
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}


@record
class GilHolderBlockedFacts:
    """The GIL holder sleeps in a blocking system call (analysis.python_state.holder_blocked)."""
    tid: int
    syscall: str | None                  # the call's name
    function: str | None = None          # the native function it waits in (model.report.entry_frame)
    library: str | None = None           # the first library of its native stack
    ctypes: bool = False                 # inside a ctypes call that keeps the GIL (a PyDLL's function)
    caller: CodeLine | None = None       # ctypes: the Python frame that made the call
    moved: list[int] | None = None

    __optional__ = {"ctypes": lambda r: not r.ctypes, "caller": lambda r: not r.ctypes, "moved": _NOT_MOVED}
    __nested__ = {"caller": CodeLine}


@record
class OwnerGoneFacts:
    """A thread waits on something whose owners are gone (no thread of this process)."""
    waiter: int
    kind: str                            # model.kinds.WaitKind of the wait
    address: int | None
    owners: list[int] = field(default_factory=list)   # the owners recorded, gone; [] a Python lock's owner ident
    owner_ident: int | None = None       # no owner TID: the Python lock's owner (a thread ident no thread has)
    moved: list[int] | None = None

    __optional__ = {"owner_ident": lambda r: bool(r.owners), "moved": _NOT_MOVED}


@record
class HolderExitedFacts:
    """A Lock that records no owner, locked, whose holder most likely ended (analysis.holders)."""
    waiter: int
    kind: str
    address: int | None
    name: ObjectPath | None              # the variable that reaches the lock (worded in the JSON)
    evidence: str                        # model.kinds.HolderEvidence
    confidence: str                      # model.kinds.Confidence
    frame: CodeLine | None = None        # the frame that says so
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}
    __nested__ = {"name": ObjectPath, "frame": CodeLine}


@record
class OwnersUnknownFacts:
    """Threads blocked on something whose owner pyhang cannot name: their waits
    their waits."""
    waits: list[UnknownOwnerWait] = field(default_factory=list)
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}
    __nested__ = {"waits": UnknownOwnerWait}


@record
class NothingCanWakeFacts:
    """A Queue.get, put or join no other thread of the process can end (analysis.deadlocks.nothing_can_wake)."""
    kind: str                            # the queue wait: model.kinds.WaitKind PY_QUEUE_GET, _PUT or _JOIN
    address: int | None                  # the queue
    name: ObjectPath | None              # the variable that reaches it (worded in the JSON)
    waiters: list[int]
    referenced_by: list[int]             # the threads that reach the queue from their frames
    complete: bool                       # every thread's frames could be read for it
    confidence: str
    length: int | None = None            # its qsize()
    maxsize: int | None = None
    unfinished: int | None = None        # a join: the tasks not done
    consumers: list[int] | None = None   # a join: the threads waiting in its get()
    moved: list[int] | None = None

    __optional__ = {"unfinished": _none("unfinished"), "consumers": _none("consumers"), "moved": _NOT_MOVED}
    __nested__ = {"name": ObjectPath}


@record
class ExecutorStarvationFacts:
    """Every worker of a ThreadPoolExecutor waits for a pending future."""
    work_queue: int                      # the executor's work queue
    workers: list[int]
    futures: list[int]                   # the futures they wait for
    confidence: str
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}


@record
class AsyncioLoopBlockedFacts:
    """An event loop's thread blocked inside a task's step (analysis.asyncio)."""
    task: str                            # the task being stepped
    tid: int                             # the loop's thread
    ready: int | None                    # callbacks ready to run
    pending: int                         # its other pending tasks
    frame: CodeLine | None               # its innermost Python frame
    program_frame: CodeLine | None       # the program's own call below library frames, when that is another
    wait: str | None                     # model.kinds.WaitKind of what the thread waits on
    wait_address: int | None
    wait_call: str | None                # a system call's name
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}
    __nested__ = {"frame": CodeLine, "program_frame": CodeLine}


@record
class PoolIdleFacts:
    """Native thread-pool workers waiting for work."""
    workers: list[PoolWorker] = field(default_factory=list)
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}
    __nested__ = {"workers": PoolWorker}


@record
class WaitsOnProcessFacts:
    """Pipe, socket, child, collective and gRPC waits whose other end only other processes hold
    (analysis.syscalls.waits_on_processes), and the process whose tree to look at (`root`)."""
    waits: list[ProcessWait]
    root: int | None
    # the processes at the other ends that no tree from `root` holds (a server started apart: a database, redis)
    outside: list[int] | None = None
    moved: list[int] | None = None

    __optional__ = {"outside": _none("outside"), "moved": _NOT_MOVED}
    __nested__ = {"waits": ProcessWait}


@record
class PoolTaskLostFacts:
    """(A tree's) a multiprocessing Pool's result waited for while every worker waits for a task."""
    pid: int                             # the pool's process
    workers: list[int]                   # its workers' PIDs
    waits: list[PoolResultWait]
    confidence: str
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}
    __nested__ = {"waits": PoolResultWait}


@record
class ServerDiedFacts:
    """(A tree's) pipe or socket waits no live holder serves, whose server most likely died."""
    pid: int
    waits: list[ServedWait]
    confidence: str
    dead: list[DeadServer]               # the processes that died, with how they exited and the evidence
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}
    __nested__ = {"waits": ServedWait, "dead": DeadServer}


@record
class CollectiveMismatchFacts:
    """(A tree's) ranks of one job wait in different collectives (analysis.collectives.diverged)."""
    groups: list[RankGroup]              # the largest first
    odd: list[int]                       # the PIDs of the groups smaller than the largest
    world_size: int | None
    backend: str | None
    confidence: str
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}
    __nested__ = {"groups": RankGroup}


@record
class IdleFacts:
    """Waits for work anyone may give, nothing waiting on them (analysis.idle)."""
    waits: list[IdleWait] = field(default_factory=list)
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}
    __nested__ = {"waits": IdleWait}


def _unless(unread):
    return lambda r: r.unread != unread


@record
class IncompleteFacts:
    """What pyhang needs could not be read (`unread`: model.kinds.Unread), and what still holds (`read`):
    the Python state (its status, version and why the process is Python) or glibc's lock layouts (why not,
    and the futex waits that need them)."""
    unread: str
    status: str | None = None                 # python-state: model.kinds.PythonStatus
    version: str | None = None                # python-state
    free_threaded: bool = False               # python-state: a free-threaded build
    python_evidence: str | None = None        # python-state: model.kinds.PythonEvidence
    python_evidence_path: str | None = None   # python-state
    problem: object = None                    # lock-layouts: a model.waits.LayoutsIssue (older: a sentence)
    waits: list[LayoutsWait] = field(default_factory=list)   # lock-layouts
    read: StillRead = field(default_factory=StillRead)   # what still holds (analysis.completeness.still_read)
    moved: list[int] | None = None

    _PYTHON = _unless(Unread.PYTHON_STATE)
    _LAYOUTS = _unless(Unread.LOCK_LAYOUTS)
    __optional__ = {"status": _PYTHON, "version": _PYTHON, "free_threaded": _PYTHON, "python_evidence": _PYTHON,
                    "python_evidence_path": _PYTHON, "problem": _LAYOUTS, "waits": _LAYOUTS, "moved": _NOT_MOVED}
    __nested__ = {"waits": LayoutsWait, "read": StillRead}


@record
class UnaccountedFacts:
    """Waits no other finding explains, with their raw facts (analysis.account)."""
    waits: list[UnaccountedWait] = field(default_factory=list)
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}
    __nested__ = {"waits": UnaccountedWait}


@record
class NoProgressFacts:
    """A second look: unaccounted waits that did not move, nor did anything to end them."""
    interval: float                      # seconds between the looks
    threads: int                         # the threads of the process
    moved: list[int] | None = None

    __optional__ = {"moved": _NOT_MOVED}


@record
class HeldAcrossSleepFacts:
    """Threads wait for locks whose holder sleeps long (analysis.held)."""
    call: str | None                     # the holder's sleeping system call
    left_ns: int | None = None           # how long it still sleeps, when known
    requested_ns: int | None = None      # else the sleep it asked for
    holder: int = 0
    locks: list[HeldLock] = field(default_factory=list)
    waiters: list[int] = field(default_factory=list)
    behind: list[int] = field(default_factory=list)   # threads waiting (only) on the waiters
    confidence: str = ""
    frame: CodeLine | None = None        # the holder's own frame
    moved: list[int] | None = None

    __optional__ = {"left_ns": _none("left_ns"), "requested_ns": _none("requested_ns"), "moved": _NOT_MOVED}
    __nested__ = {"locks": HeldLock, "frame": CodeLine}


# The facts record of every verdict kind (python/tests/test_verdict_words.py finds none missing).
FACTS = {
    VerdictKind.GIL_NOBODY_HOLDS: GilNobodyHoldsFacts,
    VerdictKind.GIL_HANDOVER: GilHandoverFacts,
    VerdictKind.GIL_HOLDER_BLOCKED: GilHolderBlockedFacts,
    VerdictKind.OWNER_GONE: OwnerGoneFacts,
    VerdictKind.HOLDER_EXITED: HolderExitedFacts,
    VerdictKind.OWNERS_UNKNOWN: OwnersUnknownFacts,
    VerdictKind.NOTHING_CAN_WAKE: NothingCanWakeFacts,
    VerdictKind.EXECUTOR_STARVATION: ExecutorStarvationFacts,
    VerdictKind.ASYNCIO_LOOP_BLOCKED: AsyncioLoopBlockedFacts,
    VerdictKind.POOL_IDLE: PoolIdleFacts,
    VerdictKind.WAITS_ON_PROCESS: WaitsOnProcessFacts,
    VerdictKind.POOL_TASK_LOST: PoolTaskLostFacts,
    VerdictKind.SERVER_DIED: ServerDiedFacts,
    VerdictKind.COLLECTIVE_MISMATCH: CollectiveMismatchFacts,
    VerdictKind.IDLE: IdleFacts,
    VerdictKind.INCOMPLETE: IncompleteFacts,
    VerdictKind.UNACCOUNTED: UnaccountedFacts,
    VerdictKind.NO_PROGRESS: NoProgressFacts,
    VerdictKind.HELD_ACROSS_SLEEP: HeldAcrossSleepFacts,
}


def facts_from_data(kind, data):
    """The facts record of a verdict of `kind` from its JSON `facts` (to_data's dict, or an older pyhang's);
    a kind this pyhang does not know keeps its dict."""
    cls = FACTS.get(kind)
    if cls is None or not isinstance(data, dict):
        return data
    return from_data(cls, data)

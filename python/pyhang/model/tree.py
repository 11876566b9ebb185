"""A process tree's report: one Report per process examined, a line for
each process that could not be, and what holds across processes — the
cross-process wait-for graph with its cycles, and fork hazards.

Its JSON form (pyhang.render.tree) is the "pyhang-tree/1" contract of
docs/json-contract.md.  Sentences are not stored here.
"""
from __future__ import annotations
from pyhang.model.record import field, record

from pyhang.model.lock_objects import LockObject
from pyhang.model.report import Hazard, Report, Verdict
from pyhang.model.verdict_facts import ProcessPeer

Node = tuple[int, int]   # (pid, tid)


@record
class ProcessExit:
    """How a process that died and is not reaped yet (a zombie) ended: its
    wait status as waitpid(2) would give it, which the kernel keeps in
    /proc/PID/stat's exit_code (field 52) until the parent reaps it; None
    when it could not be read (no permission, an older kernel)."""
    wait_status: int | None = None

    @property
    def signal(self):
        """The signal that killed it, or None (it exited, or the status is not known)."""
        ws = self.wait_status
        return ws & 0x7f if ws is not None and ws & 0x7f not in (0, 0x7f) else None

    @property
    def status(self):
        """Its exit status when it exited by itself (exit(), a return from main), else None."""
        ws = self.wait_status
        return (ws >> 8) & 0xff if ws is not None and ws & 0x7f == 0 else None

    @property
    def core_dumped(self):
        return self.signal is not None and bool(self.wait_status & 0x80)


@record
class ProcessEntry:
    pid: int
    parent_pid: int | None = None
    report: Report | None = None
    problem: str | None = None      # why it was not examined (exited, zombie, no permission, ...)
    comm: str | None = None
    # A zombie: it died, and how (its exit status or signal); None for a process that lives or is gone.
    exit: ProcessExit | None = None
    # What the process has at the addresses of locks its fork children wait
    # on ({address: model.lock_objects.LockObject}); None when not asked.
    lock_objects: dict[int, LockObject] | None = None


@record
class TreeEdge:
    """Thread `waiter` of its process waits for something thread `owner`
    (of the same or another process) can end."""
    waiter: Node
    owner: Node
    kind: str                  # model.kinds.TreeEdgeKind, or a report edge's kind within a process
    confidence: str            # model.kinds.Confidence
    # what the edge was made from: the record of its kind (model.tree_edge_facts), None for one with none
    facts: object = None


@record
class KnotSleeper:
    """A thread a knot's waits count on to serve them while it sleeps (analysis.tree.sleepy_deadlocks): its
    call, and how long it still sleeps (`left_ns`) or the sleep it asked for (`requested_ns`); neither for a
    wait for a signal only."""
    call: str | None
    left_ns: int | None = None
    requested_ns: int | None = None
    pid: int = 0
    tid: int = 0

    __optional__ = {"left_ns": lambda r: r.left_ns is None, "requested_ns": lambda r: r.requested_ns is None}


@record
class TreeDeadlock:
    """A knot of the tree's wait-for graph (analysis.tree): `nodes`, every
    one of whose waits can be ended only by other nodes (each of its
    possible servers, for a wait any of several may end); `edges`, those
    waits; `waiting`, the threads outside it that wait on it (directly or
    through one another) and can go on only once it does."""
    nodes: list[Node]
    confidence: str
    edges: list[TreeEdge]
    waiting: list[Node] = field(default_factory=list)
    # A knot that holds while threads that could serve it sleep (analysis.tree.sleepy_deadlocks): those threads
    sleepers: list[KnotSleeper] = field(default_factory=list)

    @property
    def pids(self):
        return sorted({pid for pid, _ in self.nodes})


@record
class StallThread:
    """A thread of a stall's holder: what it waits on (a model.kinds.WaitKind), in which call."""
    tid: int
    kind: str
    syscall: str | None


@record
class StallHolder:
    """A process holding the other end of a stall's pipe or socket: its command, the first of its threads
    (analysis.tree.MAX_THREADS_LISTED) and how many it has."""
    pid: int
    comm: str | None
    threads: list[StallThread] = field(default_factory=list)
    thread_count: int = 0


@record
class Stall:
    """A wait on a pipe or socket that no holder of the other end serves now (analysis.tree.stalls)."""
    waiter: Node
    syscall: str | None
    fd: int | None
    kind: str                         # the fd's kind: pipe or socket
    link: str | None
    holders: list[StallHolder] = field(default_factory=list)


@record
class OutsideWait:
    """A wait on processes outside the tree (analysis.tree.outside): the processes, and what they are."""
    waiter: Node
    pids: list[int] = field(default_factory=list)
    peers: list[ProcessPeer] = field(default_factory=list)


@record
class TreeReport:
    root_pid: int | None
    processes: list[ProcessEntry] = field(default_factory=list)
    edges: list[TreeEdge] = field(default_factory=list)
    deadlocks: list[TreeDeadlock] = field(default_factory=list)
    fork_hazards: list[tuple[int, Hazard]] = field(default_factory=list)   # (pid, hazard)
    truncated: int = 0                # descendants left unexamined beyond the bound
    unfollowed: list[Node] = field(default_factory=list)   # fd waits not followed: no fd table (cores)
    # Waits on a pipe or socket that no holder of the other end serves now (analysis.tree.stalls)
    stalls: list[Stall] = field(default_factory=list)
    # What hangs across processes without a cycle (analysis.pools, .dead_servers, .collectives):
    # (pid, Verdict), the verdict's threads those of that process
    verdicts: list[tuple[int, Verdict]] = field(default_factory=list)
    # Threads of Python processes the tree's look together does not account for (analysis.tree.unaccounted)
    unaccounted: list[Node] = field(default_factory=list)
    # Of those, the waits on processes outside the tree (a database, a cache, an upstream server: analysis.tree.
    # outside)
    outside: list[OutsideWait] = field(default_factory=list)
    exit_status: int = 0              # model.kinds.ExitStatus, over the tree and every process's report

    def process(self, pid):
        return next((p for p in self.processes if p.pid == pid), None)

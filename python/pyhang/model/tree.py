"""A process tree's report: one Report per process examined, a line for
each process that could not be, and what holds across processes — the
cross-process wait-for graph with its cycles, and fork hazards.

Its JSON form (pyhang.render.tree) is the "pyhang-tree/1" contract of
docs/json-contract.md.  Sentences are not stored here.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from pyhang.model.report import Hazard, Report

Node = Tuple[int, int]   # (pid, tid)


@dataclass
class ProcessEntry:
    pid: int
    parent_pid: Optional[int] = None
    report: Optional[Report] = None
    problem: Optional[str] = None      # why it was not examined (exited, zombie, no permission, ...)
    comm: Optional[str] = None
    # What the process has at the addresses of locks its fork children wait
    # on ({address: PythonLocks.lock_objects() entry}); None when not asked.
    lock_objects: Optional[Dict[int, dict]] = None


@dataclass
class TreeEdge:
    """Thread `waiter` of its process waits for something thread `owner`
    (of the same or another process) can end."""
    waiter: Node
    owner: Node
    kind: str                  # model.kinds.TreeEdgeKind, or a report edge's kind within a process
    confidence: str            # model.kinds.Confidence
    facts: Dict[str, object] = field(default_factory=dict)


@dataclass
class TreeDeadlock:
    nodes: List[Node]
    confidence: str
    edges: List[TreeEdge]

    @property
    def pids(self):
        return sorted({pid for pid, _ in self.nodes})


@dataclass
class TreeReport:
    root_pid: Optional[int]
    processes: List[ProcessEntry] = field(default_factory=list)
    edges: List[TreeEdge] = field(default_factory=list)
    deadlocks: List[TreeDeadlock] = field(default_factory=list)
    fork_hazards: List[Tuple[int, Hazard]] = field(default_factory=list)   # (pid, hazard)
    truncated: int = 0                # descendants left unexamined beyond the bound
    unfollowed: List[Node] = field(default_factory=list)   # fd waits not followed: no fd table (cores)
    cycles_truncated: bool = False
    # Waits on a pipe or socket that no holder of the other end serves now
    # (analysis.tree.stalls): {"waiter": Node, "syscall", "fd", "kind", "link",
    # "holders": [{"pid", "comm", "threads": [{"tid", "kind", "syscall"}]}]}
    stalls: List[dict] = field(default_factory=list)

    def process(self, pid):
        return next((p for p in self.processes if p.pid == pid), None)

"""The facts of a process tree's edge (model.tree.TreeEdge), one record per
edge kind that has any (model.kinds.TreeEdgeKind, and a report's own edge
within a process): what the wait-for graph made the edge from (analysis.tree),
and what render.tree groups and words its edges by.  A `work-giver` or
`pool-result` edge has none (None).  `FACTS` lists every record.

An edge's JSON carries its record's fields beside its own (waiter, owner,
kind, confidence: no `facts` object), each left out while it is None, as the
analysis's dicts always were (docs/json-contract.md's tree edges)."""
from __future__ import annotations

from pyhang.model.record import field, fields_of, record


@record
class ChildExitFacts:
    """A wait4/waitid for a child to exit (analysis.tree: its threads must end)."""
    syscall: str | None                  # the waiting system call
    child: int                           # the PID of the child it waits for


@record
class FdPeerFacts:
    """A read, write, poll or select on a pipe or unix socket that the processes holding its
    other end (`pipe-other-end`) or its peer (`socket-peer`) may end (analysis.tree)."""
    syscall: str | None                  # the waiting system call
    fd: int | None                       # the waiter's fd
    link: str | None                     # the fd's /proc link target: "pipe:[1234]", "socket:[5678]"
    direction: str | None                # "read" or "write" (by the call, or a poll's events); None: not known
    holder_fds: list[int] = field(default_factory=list)   # the owner process's fds of the other end


@record
class FileLockFacts:
    """A flock/fcntl wait on a lock /proc/locks names the owner process a holder of (analysis.tree)."""
    syscall: str | None                  # the waiting system call
    fd: int | None                       # the waiter's fd of the locked file
    path: str | None                     # the file's path, as its fd's link names it


@record
class ProcessEdgeFacts:
    """A thread edge of one process's report (model.report.Edge), within the tree (analysis.tree.graph)."""
    address: int | None                  # the address of what it waits on (the report edge's)
    source: str                          # model.kinds.OwnerSource: how its owner was found


# Every record of a tree edge's facts (python/tests/test_schema_model.py finds each in the JSON Schema).
FACTS = (ChildExitFacts, FdPeerFacts, FileLockFacts, ProcessEdgeFacts)


def schema_name(cls):
    """The JSON Schema's definition of record `cls`: tree_edge_facts_child_exit for ChildExitFacts."""
    name = cls.__name__[:-len("Facts")]
    return "tree_edge_facts" + "".join("_" + c.lower() if c.isupper() else c for c in name)


def facts_data(facts):
    """The fields an edge's JSON carries of its facts (None: none), each left out while it is None."""
    return {k: v for k, v in fields_of(facts).items() if v is not None} if facts is not None else {}

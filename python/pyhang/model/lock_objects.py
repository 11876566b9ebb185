"""What a process has at lock addresses, as records: the answer to the
`lock_objects` question (pyhang.model.facts), made by native
PythonLocks.lock_objects() itself (python/records.hpp); a snapshot or a fork
parent's gdb answer keeps it as data (`to_data`, back with `from_data`).  The
process-tree rules (pyhang.analysis.tree_forks) read their fields: a fork
child's copy of a lock is the parent's object at the same address."""
from __future__ import annotations

from pyhang.model.record import field, record

__all__ = ["LockReference", "LockObject"]


@record
class LockReference:
    """A thread whose innermost frames reference the object, and the innermost such frame."""
    tid: int = 0
    function: str = ""
    file: str = ""
    line: int = 0


@record
class LockObject:
    """The object at one address (native cpython::LockObject)."""
    object: int = 0
    type_name: str | None = None      # "_thread.lock", "_thread.RLock"; None: no threading lock is there
    refcount: int | None = None
    alive: bool = False               # a plausible refcount: not a freed block
    locked: bool | None = None        # a Lock's state; an RLock's owner != 0
    owner_thread_id: int | None = None   # an RLock's owner (pthread_t)
    owner_tid: int | None = None      # ... the thread of this process it is
    references: list[LockReference] = field(default_factory=list)

    __nested__ = {"references": LockReference}

"""The threading module's state in one process, as records: the answer to the
`threading` question (pyhang.model.facts), made by native
PythonLocks.threading() itself (python/records.hpp); a snapshot keeps it as
data (`to_data`, back with `from_data`).  The analysis
(pyhang.analysis.threading) reads its fields."""
from __future__ import annotations

from pyhang.model.record import field, record
from pyhang.model.unread import ReadProblem

__all__ = ["ThreadObject", "ThreadingState"]


@record
class ThreadObject:
    """One threading.Thread object of threading._active, then _limbo
    (native cpython/threading.hpp PyThreadObject)."""
    object: int = 0                   # the Thread object
    type: str | None = None           # its type's name ("Thread", a subclass)
    name: str | None = None           # Thread.name
    ident: int | None = None          # _ident: the pthread_t (threading.get_ident())
    native_id: int | None = None      # _native_id (3.8+): the LWP
    daemon: bool | None = None
    tstate_lock: int | None = None    # _tstate_lock (3.6–3.12): what a join waits on
    handle: int | None = None         # _handle (3.13; _os_thread_handle 3.14+): the _ThreadHandle
    handle_struct: int | None = None  # ... the C ThreadHandle it wraps
    started: bool = False             # in threading._active (else still in _limbo)


@record
class ThreadingState:
    """threading's Thread objects, or why they could not be read."""
    imported: bool = False            # threading is in sys.modules
    problem: ReadProblem | None = None   # what could not be read
    threads: list[ThreadObject] = field(default_factory=list)
    # threading._shutdown has begun (interpreter exit): _SHUTTING_DOWN (3.9+), else _main_thread._is_stopped;
    # None when not read
    shutting_down: bool | None = None

    __nested__ = {"threads": ThreadObject, "problem": ReadProblem}

"""asyncio in one process, as records: the answer to the `asyncio` question
(pyhang.model.facts), made once at the collector from native
asyncio_state() (`from_data`); a snapshot keeps it as data (`to_data`).
The asyncio analysis (pyhang.analysis.asyncio) reads their fields.

A `state` holds a value of model.kinds.FutureState, the native name
table's names."""
from __future__ import annotations

from pyhang.model.record import field, record
from pyhang.model.unread import ReadProblem
from pyhang.model.waits import CodeLine
from pyhang.model.warning_facts import StateIssue, warnings_of

__all__ = ["TypedObject", "AwaitedFuture", "TaskFacts", "LoopFacts", "ExecutorJob", "AsyncioState"]


@record
class TypedObject:
    """An object and the name of its type."""
    object: int = 0
    type: str | None = None


@record
class AwaitedFuture:
    """The future-like object a task awaits (native cpython::PyFutureInfo)."""
    object: int | None = None
    type: str | None = None
    state: str = "unknown"            # model.kinds.FutureState
    loop: int | None = None
    children: list[int] = field(default_factory=list)   # a gather's children
    chained: list[TypedObject] = field(default_factory=list)   # futures chained to it (wrap_future, ...)
    when: float | None = None         # a sleep's deadline, on the loop's clock

    __nested__ = {"chained": TypedObject}


@record
class TaskFacts:
    """One asyncio task (native cpython::PyTaskInfo)."""
    object: int | None = None
    type: str | None = None
    native: bool = False              # a C _asyncio.Task
    name: str | None = None
    state: str = "unknown"            # model.kinds.FutureState
    loop: int | None = None
    coro: int | None = None
    stack: list[CodeLine] = field(default_factory=list)   # its coroutine chain, innermost first
    innermost_self: int | None = None   # the first local of the innermost frame
    innermost_self_type: str | None = None
    awaits: AwaitedFuture | None = None
    has_exception: bool = False
    exception_type: str | None = None
    exception_unretrieved: bool = False
    completes: list[TypedObject] = field(default_factory=list)   # futures its completion completes
    problem: ReadProblem | None = None   # what could not be read

    __nested__ = {"stack": CodeLine, "awaits": AwaitedFuture, "completes": TypedObject, "problem": ReadProblem}


@record
class LoopFacts:
    """An event loop and the thread running it (native cpython::PyLoopInfo)."""
    loop: int | None = None
    type: str | None = None
    tid: int | None = None
    frame_function: str | None = None
    current_task: int | None = None
    ready: int | None = None          # callbacks in its ready queue
    scheduled: int | None = None
    stopping: bool | None = None
    ready_chained: list[TypedObject] = field(default_factory=list)   # futures its ready callbacks complete

    __nested__ = {"ready_chained": TypedObject}


@record
class ExecutorJob:
    """A work item an executor's thread runs for a loop."""
    tid: int = 0
    work_item: int | None = None
    future: int | None = None


@record
class AsyncioState:
    """asyncio's tasks and loops (native asyncio_state())."""
    imported: bool = False
    registry: str | None = None       # where the tasks were found
    problem: ReadProblem | None = None   # what could not be read
    # how the C objects were read differently from pyhang's own row (StateIssues of the kinds asyncio-debug-*,
    # worded by render.interpreter)
    warnings: list[StateIssue] = field(default_factory=list)
    tasks: list[TaskFacts] = field(default_factory=list)
    loops: list[LoopFacts] = field(default_factory=list)
    jobs: list[ExecutorJob] = field(default_factory=list)
    clock: float | None = None        # time.monotonic() when a live process was read (loop time); None: a core

    __nested__ = {"tasks": TaskFacts, "loops": LoopFacts, "jobs": ExecutorJob, "problem": ReadProblem}

    def __post_init__(self):
        self.warnings = warnings_of(self.warnings)   # (a snapshot's data: each its record)

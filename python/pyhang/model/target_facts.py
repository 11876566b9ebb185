"""What the target is, as a record: the answer to the `target` question
(pyhang.model.facts), made once at the collector (gdb's, the one that
never stops the process); a snapshot keeps it as data (`to_data`, and
`from_data` back).  The analysis (pyhang.analysis.gather) reads its
fields."""
from __future__ import annotations

from pyhang.model.proc_record import ProcSummary
from pyhang.model.record import field, record
from pyhang.model.waits import LayoutsIssue

__all__ = ["TargetFacts"]


@record
class TargetFacts:
    """The target, what about it could not be read or trusted, and why
    glibc's lock layouts are unknown or need a caveat."""
    kind: str = ""                    # "live", "core", "callback"
    pid: int | None = None            # as the host knows it
    core: str | None = None
    executable: str | None = None
    # why its executable's file could not be read (the target reader's issue: {kind: model.kinds.TargetWarning,
    # path, number, text, other_text}, worded by render.target.object_problem_text); None: it was read
    executable_problem: dict | None = None
    namespace_pid: int | None = None  # its pid in its own PID namespace, when that differs
    parent_pid: int | None = None
    warnings: list = field(default_factory=list)   # as the collector gives them: {kind: model.kinds.TargetWarning, ...}
    lock_problem: LayoutsIssue | None = None   # the native LockReader's problem
    lock_caveat: LayoutsIssue | None = None   # ... and its caveat
    proc_record: ProcSummary | None = None    # a core's record of /proc (pyhang gcore's), when it holds one in use

    __nested__ = {"lock_problem": LayoutsIssue, "lock_caveat": LayoutsIssue, "proc_record": ProcSummary}

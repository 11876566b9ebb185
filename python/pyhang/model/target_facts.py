"""What the target is, as a record: the answer to the `target` question
(pyhang.model.facts), made once at the collector (gdb's, the one that
never stops the process); a snapshot keeps it as data (`to_data`, and
`from_data` back).  The analysis (pyhang.analysis.gather) reads its
fields."""
from __future__ import annotations

from pyhang.model.proc_record import ProcSummary
from pyhang.model.record import field, record
from pyhang.model.waits import LayoutsIssue
from pyhang.model.warning_facts import TargetIssue, warnings_of

__all__ = ["TargetFacts", "MappedObject"]


@record
class MappedObject:
    """A file the target maps (native Target.objects()) and how far its symbols can be read."""
    path: str = ""
    start: int = 0                    # its lowest mapped address ...
    end: int = 0                      # ... and the end of its highest mapping
    bias: int = 0                     # runtime address = link-time address + bias
    symbols: int = 0                  # the ELF symbols it has (0: its file was not read)
    debug_info: bool = False          # it has DWARF debug info
    problem: TargetIssue | None = None   # why its file could not be read, or is another build than the core's

    __nested__ = {"problem": TargetIssue}


@record
class TargetFacts:
    """The target, what about it could not be read or trusted, and why
    glibc's lock layouts are unknown or need a caveat."""
    kind: str = ""                    # "live", "core", "callback"
    pid: int | None = None            # as the host knows it
    core: str | None = None
    executable: str | None = None
    # why its executable's file could not be read (worded by render.target.object_problem_text); None: it was read
    executable_problem: TargetIssue | None = None
    namespace_pid: int | None = None  # its pid in its own PID namespace, when that differs
    parent_pid: int | None = None
    warnings: list[TargetIssue] = field(default_factory=list)   # the target reader's and the collector's
    lock_problem: LayoutsIssue | None = None   # the native LockReader's problem
    lock_caveat: LayoutsIssue | None = None   # ... and its caveat
    proc_record: ProcSummary | None = None    # a core's record of /proc (pyhang gcore's), when it holds one in use

    __nested__ = {"lock_problem": LayoutsIssue, "lock_caveat": LayoutsIssue, "proc_record": ProcSummary,
                  "executable_problem": TargetIssue}

    def __post_init__(self):
        self.warnings = warnings_of(self.warnings)   # (a snapshot's data: each its record)

"""The decoded interpreter of one process, as records: the answer to the
`python` question (pyhang.model.facts), made by the native module
(Interpreter.state(): python/records.hpp) once at the collector; a snapshot
keeps it as data (`to_data`, and `from_data` back).  The analysis
(pyhang.analysis.python_state) reads their fields.

A thread's frames come from the native module as a sequence that makes each
frame's record when asked (native Frames, a collections.abc.Sequence): a
report walks thousands of frames through their keys only (`Frames.keys`:
(function, file, line, entry_frame, end_line, col, end_col, c_call) tuples,
one object for all the frames equal in these).  From a snapshot they are a
list of PyFrameFacts.

The state's `warnings` are model.warning_facts.StateIssue records (and the
no-stop collector's gil-moved, a TargetIssue)."""
from __future__ import annotations

from collections.abc import Sequence

from pyhang.model.record import field, record
from pyhang.model.unread import ReadProblem
from pyhang.model.warning_facts import StateIssue, warnings_of

__all__ = ["PyFrameFacts", "PyThreadFacts", "GilFacts", "PythonState", "StateMoves", "CodeStackDepths"]


@record
class PyFrameFacts:
    """One Python frame, innermost first (native cpython::PyFrame)."""
    function: str = ""
    file: str = ""
    line: int = 0
    entry_frame: bool = False         # the frame an evaluation loop was entered with
    end_line: int = -1                # -1: not read (a snapshot made before columns were)
    col: int = -1
    end_col: int = -1
    frame: int = 0                    # the frame object / _PyInterpreterFrame
    code: int = 0                     # its code object
    c_call: Sequence | None = None    # the C callable it calls: (type, name, qualname, repr, name_in_code, address)


@record
class PyThreadFacts:
    """One Python thread state (native cpython::PyThreadInfo)."""
    tstate: int = 0
    interp: int = 0                   # its interpreter's state
    interp_id: int = 0
    thread_id: int = 0                # the pthread_t (threading.get_ident())
    native_tid: int | None = None     # the LWP (3.11+), None when not known
    frames: Sequence[PyFrameFacts] = field(default_factory=list)   # innermost first
    # a stack deeper than the walker keeps: how many frames between its innermost and outermost kept were
    # left out, and where (they would stand before frames[frames_omitted_at]); 0: none
    frames_omitted: int = 0
    frames_omitted_at: int = 0
    problem: ReadProblem | None = None   # why its frames are incomplete; None: they are not
    attached: bool | None = None
    holds_gil: bool = False

    __nested__ = {"frames": PyFrameFacts, "problem": ReadProblem}


@record
class GilFacts:
    """One GIL: the process's, or an interpreter's own (native cpython::GilInfo)."""
    address: int = 0
    size: int = 0
    locked: bool | None = None
    holder_tstate: int = 0            # the thread state last holding it
    switch_number: int | None = None
    interp_id: int = -1               # -1: the process-wide GIL (before 3.12, or not known)
    source: str = ""                  # how locked/holder were found: gil-state, not-created, tstate-current, unreadable
    ranges: list[Sequence[int]] = field(default_factory=list)   # [start, size] of each piece of it

    def pieces(self):
        """[start, size] of each piece (a snapshot made before pieces were read: the GIL itself)."""
        return self.ranges or [(self.address, self.size)]


@record
class PythonState:
    """The decoded interpreter (native Interpreter.state()); `status` a model.kinds.PythonStatus
    (None: a snapshot that says nothing of it)."""
    status: str | None = None
    version: str | None = None
    major: int = 0
    minor: int = 0
    patch: int = 0
    library: str | None = None        # the file the runtime is in
    layout: str | None = None         # the layout table it was read with (the release it was generated from)
    layout_basis: str = "generated"   # how that table relates to `version` (model.kinds.LayoutBasis)
    layout_debug_offsets: bool = False   # corrected by the target's own _Py_DebugOffsets
    free_threaded: bool = False
    runtime: int = 0                  # _PyRuntime
    gc_collecting: bool | None = None   # None: not known
    gils: list[GilFacts] = field(default_factory=list)
    threads: list[PyThreadFacts] = field(default_factory=list)
    warnings: list[StateIssue] = field(default_factory=list)   # what about it could not be read or trusted

    __nested__ = {"gils": GilFacts, "threads": PyThreadFacts}

    def __post_init__(self):
        self.warnings = warnings_of(self.warnings)   # (a snapshot's data: each its record)


@record
class StateMoves:
    """What changed between two reads of a process that ran (native state_moves)."""
    moved: list[int] = field(default_factory=list)   # native TIDs of the threads whose Python frames differ
    gil_moved: bool = False           # who holds a GIL differs


@record
class CodeStackDepths:
    """The stack depth CPython's compiler gives each instruction of a code object (native code_stack_depths)."""
    problem: str = ""                 # why nothing is known (a native DepthProblem name); "": the code was followed
    problem_unit: int = 0             # the code unit it was found at
    max_depth: int = 0                # the deepest the stack gets: the compiler's co_stacksize
    depth: list[int] = field(default_factory=list)   # per code unit where an instruction starts; -1 unknown

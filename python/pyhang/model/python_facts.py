"""The decoded interpreter of one process, as records: the answer to the
`python` question (pyhang.model.facts), made once at the collector from
native Interpreter.state() (`from_native`); a snapshot keeps it as data
(`to_data`, and `from_data` back).  The analysis
(pyhang.analysis.python_state) reads their fields.

A thread's frames come from the native module as a sequence that makes
each frame dict when asked (native Frames): a report walks thousands of
frames through their keys only (`FrameRecords.keys`), so a frame's record
is made when it is asked for too (`FrameRecords`).  From a snapshot they
are a list of PyFrameFacts.

The problems the native reader gives (a thread's `problem`, the state's
`warnings`) are kept as it gives them."""
from __future__ import annotations

from collections.abc import Sequence

from pyhang.model.record import field, from_data, record

__all__ = ["PyFrameFacts", "PyThreadFacts", "GilFacts", "PythonState", "FrameRecords", "from_native"]


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
    problem: object = None            # why its frames are incomplete, as the native reader gives it; None: they are not
    attached: bool | None = None
    holds_gil: bool = False

    __nested__ = {"frames": PyFrameFacts}


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
    warnings: list = field(default_factory=list)   # as the native reader gives them: {kind: model.kinds.StateWarning, ...}

    __nested__ = {"gils": GilFacts, "threads": PyThreadFacts}


class FrameRecords(Sequence):
    """A thread's frames as a read-only sequence of PyFrameFacts, each made
    when asked for from a sequence of frame dicts (native Frames); `keys()`
    gives the native sequence's own frame keys, making no frame."""
    __slots__ = ("dicts",)

    def __init__(self, dicts):
        self.dicts = dicts

    def __len__(self):
        return len(self.dicts)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [from_data(PyFrameFacts, d) for d in self.dicts[index]]
        return from_data(PyFrameFacts, self.dicts[index])

    def __iter__(self):
        return (from_data(PyFrameFacts, d) for d in self.dicts)

    def __eq__(self, other):
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None

    def keys(self):
        """(function, file, line, entry_frame, end_line, col, end_col, c_call) of every frame (Frames.keys)."""
        return self.dicts.keys()


def from_native(state):
    """The PythonState of native Interpreter.state()'s dict; its frames made when asked for (FrameRecords)."""
    out = from_data(PythonState, dict(state, threads=None, gils=None))
    out.gils = [from_data(GilFacts, g) for g in state.get("gils") or ()]
    out.threads = [_thread(t) for t in state.get("threads") or ()]
    out.warnings = list(state.get("warnings") or ())
    return out


def _thread(t):
    thread = from_data(PyThreadFacts, dict(t, frames=None))
    thread.frames = FrameRecords(t["frames"])
    return thread

"""The decoded CPython state of one target (model.python_facts.PythonState),
indexed for the questions the analysis asks: which thread state belongs to
a TID, which GIL a futex address belongs to, what each thread does with the
GIL, the Python frames of a thread."""
from pyhang.analysis import syscalls
from pyhang.libraries import is_one_of
from pyhang.model.kinds import Confidence, GilState, PythonStatus
from pyhang.model.python_facts import PythonState
from pyhang.model.record import replace
from pyhang.model.report import CCall, FramesOmitted, GilSummary, PythonFrame, entry_frame
from pyhang.model.verdict_facts import GilHolderBlockedFacts
from pyhang.model.waits import CodeLine


class PythonView:
    """The CPython state of one target, indexed by TID."""

    def __init__(self, state):
        self.state = state or PythonState(status=PythonStatus.UNREADABLE)
        self.by_tid = {}
        self.hidden = {}       # TID → the interpreters of its other thread states (one_thread, 3.12)
        self.interp_ids = {}   # TID → every interpreter it has frames in, when several (one_thread, 3.13+)
        self.frame_cache = {}  # python_frames(shared=True): (function, file, line, entry) → PythonFrame
        self.stack_cache = {}  # python_frames(shared=True): the keys of a whole stack → its PythonFrames
        self.keys_cache = {}   # TID → frame_keys of its frames
        groups = {}
        for t in self.state.threads:
            if t.native_tid:
                groups.setdefault(t.native_tid, []).append(t)
        for tid, states in groups.items():
            if len(states) == 1:
                self.by_tid[tid] = states[0]
            else:
                self.by_tid[tid], self.interp_ids[tid], self.hidden[tid] = one_thread(states, self.version)

    @property
    def status(self):
        return self.state.status

    @property
    def ok(self):
        return self.status == PythonStatus.OK

    @property
    def version(self):
        return self.state.version

    @property
    def gils(self):
        return self.state.gils

    @property
    def threads(self):
        return self.state.threads

    @property
    def warnings(self):
        return self.state.warnings

    def thread(self, tid):
        return self.by_tid.get(tid)

    def frames(self, tid):
        """The Python frames (PyFrameFacts) of thread `tid`, innermost first; [] for no such thread."""
        t = self.by_tid.get(tid)
        return t.frames if t is not None else []

    def interpreters(self, tid):
        """The interpreters thread `tid` is shown with (one_thread); [] for no such thread."""
        t = self.by_tid.get(tid)
        return self.interp_ids.get(tid) or ([t.interp_id] if t is not None else [])

    def hidden_interpreters(self, tid):
        """The interpreters of thread `tid`'s other thread states, not shown (one_thread)."""
        return list(self.hidden.get(tid) or ())

    def frame_keys(self, tid):
        """frame_keys() of the frames of thread `tid` (made once; [] for no
        such thread)."""
        keys = self.keys_cache.get(tid)
        if keys is None:
            t = self.by_tid.get(tid)
            keys = self.keys_cache[tid] = frame_keys(t.frames) if t is not None else []
        return keys

    def gil_of_wait(self, address):
        """The GIL (GilFacts) a futex/cond/mutex address belongs to, or None."""
        if address is None:
            return None
        for g in self.gils:
            # every piece of the GIL (on 3.6 its state is several statics)
            if any(start and start <= address < start + size for start, size in g.pieces()):
                return g
        return None

    def holder_of_wait(self, registers, default=None):
        """The TID holding the GIL a thread sleeps on (by its registers'
        futex address), `default` when it sleeps on none: each interpreter
        with a GIL of its own has its own holder."""
        gil = self.gil_of_wait(syscalls.futex_address(registers))
        return self.holder_tid(gil) if gil is not None else default

    def holder_tid(self, gil):
        """The TID of the thread holding `gil` (one of state.gils), or None."""
        holder = gil.holder_tstate
        if holder:
            for t in self.threads:
                if t.tstate == holder:
                    return t.native_tid
        return None


def _version_at_least(version, minor):
    try:
        major, got = (int(x) for x in (version or "").split(".")[:2])
    except ValueError:
        return False
    return (major, got) >= (3, minor)


def one_thread(states, version):
    """(PyThreadFacts, the interpreters it is shown with or None, the
    interpreters hidden) of one OS thread that has thread states in several
    interpreters (it runs code in another interpreter: run_string,
    _interpreters.exec, an InterpreterPoolExecutor's worker).  3.13+ make a
    thread state bound to the thread that enters: the states with frames
    nest, the one of another interpreter than the main one innermost; its
    frames first, then the others' (its `interp_id` is where the thread
    runs now; it is shown with every interpreter it has frames in).  3.12
    reuses the interpreter's first thread state, which keeps the thread id
    of the thread that created the interpreter: which thread runs it is not
    known, and the main interpreter's state stands alone, the others'
    hidden."""
    busy = [s for s in states if len(s.frames)] or states[:1]
    if len(busy) == 1:
        return busy[0], None, []
    if not _version_at_least(version, 13):
        own = next((s for s in busy if s.interp_id == 0), busy[0])
        return own, None, sorted(s.interp_id for s in busy if s is not own)
    nested = sorted(busy, key=lambda s: s.interp_id == 0)   # stable: list order among the others
    frames = [f for s in nested for f in s.frames]
    problems = [s.problem for s in nested if s.problem]   # each state's, innermost first: none is dropped
    omitted, at, before = 0, 0, 0
    for s in nested:   # (the first state whose stack was too deep to keep whole: its middle's place in all)
        if s.frames_omitted and not omitted:
            omitted, at = s.frames_omitted, before + s.frames_omitted_at
        before += len(s.frames)
    return replace(nested[0], frames=frames, holds_gil=any(s.holds_gil for s in nested),
                   problem=problems[0] if len(problems) == 1 else problems or None,
                   frames_omitted=omitted, frames_omitted_at=at), [s.interp_id for s in nested], []


def frames_omitted(view, tid):
    """The FramesOmitted of the thread's Python stack, None when it is whole."""
    t = view.thread(tid)
    if t is None or not t.frames_omitted:
        return None
    return FramesOmitted(at=t.frames_omitted_at, count=t.frames_omitted)


def gil_state(view, tid, registers):
    """holds / waiting / released / no-python / unknown for one thread."""
    if not view.ok and view.status != PythonStatus.FINALIZING:
        return GilState.NO_PYTHON if view.status == PythonStatus.NOT_PYTHON else GilState.UNKNOWN
    t = view.thread(tid)
    if t is None:
        return GilState.NO_PYTHON
    # A thread asleep on the GIL's own condition or mutex runs no Python, whatever
    # the GIL's last holder says: it waits for the GIL, or for another thread to
    # take the GIL it just dropped (FORCE_SWITCHING's switch_cond).
    if view.gil_of_wait(syscalls.futex_address(registers)) is not None:
        return GilState.WAITING
    if t.holds_gil:
        return GilState.HOLDS
    return GilState.RELEASED


def python_frames(view, tid, shared=False, gil=GilState.RELEASED):
    """The thread's PythonFrames, innermost first.  `shared`: frames equal in
    function, file, line and entry are one object, within the thread and
    across threads (recursion and thread pools repeat them thousands of
    times); only for frames nothing will change (no locals given to them).
    `gil`: the thread's GilState; a thread that runs Python or waits to may
    be between instructions, so what its innermost frame calls is likely only."""
    t = view.thread(tid)
    if t is None:
        return []
    frames = _python_frames(view, t, tid, shared)
    if frames and gil != GilState.RELEASED and frames[0].c_call is not None:
        frames[0] = _frame(view.frame_keys(tid)[0] if shared else frame_keys(t.frames)[0], running=True)
    return frames


def _python_frames(view, t, tid, shared):
    if not shared:
        # Positional: thousands of frames per report.
        return [_frame(key) for key in frame_keys(t.frames)]
    keys = view.frame_keys(tid)
    # The workers of a pool, the threads of a server: many stacks are one
    # stack, whose frames are looked up once.
    stack = tuple(keys)
    frames = view.stack_cache.get(stack)
    if frames is None:
        cache = view.frame_cache
        frames = []
        for key in keys:
            frame = cache.get(key)
            if frame is None:
                frame = cache[key] = _frame(key)
            frames.append(frame)
        view.stack_cache[stack] = frames
    return list(frames)


def _frame(key, running=False):
    function, file, line, entry, end_line, col, end_col, c_call = key
    return PythonFrame(function, file, line, entry_frame=entry, end_line=end_line, col=col, end_col=end_col,
                       c_call=_c_call(c_call, running))


def _c_call(key, running):
    """The CCall of a frame key's (type, name, qualname, repr, name_in_code,
    address): certain when the code uses its name and the thread is not
    between instructions (`running`), else likely; None for none."""
    if key is None:
        return None
    type_, _name, qualname, repr_, name_in_code, address = key
    certain = name_in_code and not running
    return CCall(function=qualname, repr=repr_, type=type_, address=address,
                 confidence=Confidence.CERTAIN if certain else Confidence.LIKELY)


def frame_keys(frames):
    """(function, file, line, entry_frame, end_line, col, end_col, c_call) of
    each PyFrameFacts: from the native sequence (FrameRecords.keys) without
    making the frames, or from a list (a snapshot made before columns were
    read has none: -1; before C calls were read, none: None)."""
    keys = getattr(frames, "keys", None)
    if keys is not None:
        return keys()
    return [(f.function, f.file, f.line, f.entry_frame, f.end_line, f.col, f.end_col,
             tuple(f.c_call) if f.c_call else None)
            for f in frames]


def main_gil(view):
    """The main interpreter's GIL (the only one before 3.12), or None."""
    gils = view.gils
    if not gils:
        return None
    return min(gils, key=lambda g: g.interp_id if g.interp_id >= 0 else 0)


def gil_summary(view, gil_states):
    """The report's `gil` object: the main interpreter's GIL, with waiters
    found from the futex each thread sleeps on."""
    summary = GilSummary()
    main = main_gil(view)
    if main is None:
        return summary
    summary.locked = main.locked
    summary.holder_tid = view.holder_tid(main)
    summary.waiters = sorted(tid for tid, s in gil_states.items() if s == GilState.WAITING and _waits_on(view, tid, main))
    return summary


def _waits_on(view, tid, gil):
    """Whether a waiting thread waits for `gil`: the GIL of its interpreter,
    or where it sleeps is not one GIL's (a wait on the GIL with nothing
    to tell which: the main one's)."""
    t = view.thread(tid)
    if len(view.gils) < 2 or t is None:
        return True
    return t.interp_id == gil.interp_id or t.interp_id not in {g.interp_id for g in view.gils}


def ctypes_call(frames):
    """Whether native `frames` (innermost first) are a ctypes call of a foreign function: libffi's call
    below ctypes' own module."""
    ffi = next((i for i, f in enumerate(frames) if is_one_of(f.library, ("libffi.",))), None)
    return ffi is not None and any(is_one_of(f.library, ("_ctypes.",)) for f in frames[ffi:])


def holder_blocked(tid, registers, frames, python_frames=()):
    """The classic hang: the GIL holder sleeps in a system call.  The facts
    of it (model.verdict_facts.GilHolderBlockedFacts), or None.  A holder inside a
    ctypes call (ctypes_call) also has `ctypes` True and the Python frame
    that made the call (`caller`: {function, file, line}): ctypes keeps the
    GIL during a call only for a function flagged to use the Python C API
    (a ctypes.PyDLL library's, ctypes.pythonapi)."""
    nr = syscalls.in_syscall(registers)
    if nr is None or nr not in syscalls.BLOCKING:
        return None
    where = entry_frame(frames)
    lib = next((f.library for f in frames if f.library), None)
    out = GilHolderBlockedFacts(tid=tid, syscall=syscalls.name(nr), function=where.function if where else None,
                                library=lib)
    if ctypes_call(frames):
        out.ctypes = True
        caller = python_frames[0] if python_frames else None
        out.caller = CodeLine(caller.function, caller.file, caller.line) if caller else None
    return out

"""gdb's `bt` with Python frames: a frame filter (on unless `set pyhang
frame-filter off`) that shows under each evaluation-loop frame of the
selected thread the Python frames it runs, innermost first, one a line, as
gdb shows the frames a filter elides (pyhang.analysis.eval_frames pairs
them), e.g.

  #7  0x... in _PyEval_EvalFrameDefault () from /usr/bin/python3.11
          [Python] park () at /srv/app.py:17
          [Python] settle () at /srv/app.py:42

Recursion is folded as py-bt folds it; a stack deeper than pyhang keeps
(model.report.FramesOmitted) pairs from both ends, its middle one line
where it would be; when the Python frames
cannot be paired with the evaluation-loop frames at all, one line before
the backtrace says so and why (`py-bt` lists them).  Anything else that goes
wrong leaves the backtrace as gdb prints it."""
import gdb
from gdb.FrameDecorator import FrameDecorator

from pyhang.analysis.eval_frames import EVAL_LOOP_NAMES, pair_indices
from pyhang.analysis.python_state import PythonView
from pyhang.model.report import FramesOmitted
from pyhang.render import recursion
from pyhang.render.text import recursion_line, unpaired_line
from pyhang.render.values import omitted_line
from pyhang.render.values import python_frame_function
from pyhang_gdb import decoders, settings
from pyhang_gdb.session import SESSION

MAX_FRAMES = 100000  # native frames looked at for one thread
NOTE_INDENT = "    "  # gdb indents an elided frame by four spaces


class _Frame(FrameDecorator):
    """A native frame named as gdb names it (`??` when nobody knows: once a
    frame filter is installed gdb would print nothing), with the Python
    frames it runs under it when it is an evaluation-loop frame."""

    def __init__(self, base, run=None):
        super().__init__(base)
        self._run = run

    def function(self):
        name = super().function()
        if not isinstance(name, str):  # a pc: gdb's own minimal-symbol name, if any
            # (an evaluation-loop frame gdb cannot name was paired by the name
            # pyhang gives the loop's split-off partition)
            name = self.inferior_frame().name() or (EVAL_LOOP_NAMES[1] if self._run else "??")
        return name

    def elided(self):
        if not self._run:
            return super().elided()
        return _elided(self.inferior_frame(), self._run)


def _elided(native, run):
    """The Python frames of `run` as gdb prints elided frames; a line that stands for frames (a recursion's
    count, a deep stack's middle) is written as gdb asks for the frame after it, in the elided frames'
    indentation: as a frame of its own gdb would print its arguments, " ()", after it."""
    for f in run:
        if isinstance(f, str):
            gdb.write(NOTE_INDENT + f + "\n")
        else:
            yield _PythonFrame(native, f)


class _PythonFrame:
    """One Python frame an evaluation-loop frame runs, as gdb prints an
    elided frame: its function, file and line, on a line of its own under
    the native frame (whose gdb frame it stands on: no level, no address)."""

    def __init__(self, native, frame):
        self._native, self._frame = native, frame

    def inferior_frame(self):
        return self._native

    def function(self):
        return python_frame_function(self._frame)

    def filename(self):
        return self._frame.file

    def line(self):
        return self._frame.line if self._frame.line >= 0 else None

    def address(self):
        return None

    def frame_args(self):
        return None

    def frame_locals(self):
        return None

    def elided(self):
        return None


def native_names(thread):
    """The function names of the thread's native frames, innermost first,
    indexed by gdb's frame level (once per stop)."""
    def compute():
        names, unnamed = [], []
        frame = gdb.newest_frame()
        while frame is not None and len(names) < MAX_FRAMES:
            name = frame.name()
            if name is None:  # code pyhang may know, as a partition of a named function
                unnamed.append((len(names), frame.pc() if not names else frame.pc() - 1))
            names.append(name)
            frame = frame.older()
        if unnamed:
            for (i, _), (fn, _, _, _) in zip(unnamed, SESSION.target().symbolize([pc for _, pc in unnamed])):
                names[i] = fn
        return names
    return SESSION.cached(("native-names", thread.num), compute)


def _pairing():
    """{gdb frame level: [Python frames, or a line that stands for frames left out]}; a line on gdb's
    output first when the thread has Python frames that cannot be paired."""
    thread = gdb.selected_thread()
    if thread is None:
        return {}
    view = PythonView(decoders.python_state())
    t = view.thread(thread.ptid[1]) if view.ok else None
    if t is None or not t.frames:
        return {}
    frames = list(t.frames)
    omitted = FramesOmitted(at=t.frames_omitted_at, count=t.frames_omitted) if t.frames_omitted else None
    names = native_names(thread)
    pairs = pair_indices(names, frames, omitted)
    if not pairs:
        gdb.write(unpaired_line(len(frames) + (omitted.count if omitted else 0),
                                sum(1 for n in names if n in EVAL_LOOP_NAMES)) + "\n")
        return {}
    return {level: _folded([frames[i] for i in run], run.index(omitted.at) if omitted and omitted.at in run
                           else None, omitted, len(frames)) for level, run in pairs.items()}


def _folded(run, cut, omitted, kept):
    """The Python frames of one evaluation-loop call, recursion folded as py-bt folds it (a repeated cycle
    once, then a line saying how often it repeats), and at `cut` the line for a deep stack's omitted middle."""
    folds = {r.start: r for r in recursion.stack_runs(run, cut)}
    out, j = [], 0
    while j < len(run):
        if j == cut:
            out.append(omitted_line(omitted, kept))
        r = folds.get(j)
        if r is None:
            out.append(run[j])
            j += 1
            continue
        out.extend(run[j:j + r.period])
        out.append(recursion_line(r))
        j = r.end
    return out


def _decorate(d, pairs):
    try:
        run = pairs.get(d.inferior_frame().level())
    except (gdb.error, RuntimeError):
        run = None
    return _Frame(d, run)


class PythonFrames:
    """The frame filter: gdb calls filter() for every backtrace."""

    def __init__(self):
        self.name = "pyhang-python-frames"
        self.priority = 100
        self.enabled = True
        gdb.frame_filters[self.name] = self

    def filter(self, frames):
        if not settings.value("frame-filter"):
            return frames
        try:
            pairs = _pairing()
        except Exception:  # noqa: BLE001 - a backtrace must never fail because of pyhang
            pairs = {}
        return (_decorate(d, pairs) for d in frames)


_FILTER = []


def register():
    if not _FILTER:
        _FILTER.append(PythonFrames())

"""The Python-frame commands libpython.py gives, on stripped builds:
`py-locals`, `py-print NAME`, `py-list [START[,END]]`, `py-up`, `py-down`,
`py-bt-full` (each also as `pyhang-<name>`).  They act on the selected
Python frame of the selected gdb thread: the innermost at first, moved by
py-up/py-down, forgotten when the inferior runs again.  As with
libpython.py, the Python frame and gdb's selected frame move together:
py-up/py-down also select the evaluation-loop frame that runs the Python
frame, and after gdb's `frame N`/`up`/`down` the selected Python frame is
the innermost one run at or above gdb's frame (where the two stacks can be
paired: pyhang.analysis.eval_frames).  Values come from target memory
through the native PythonValues (bounded, never raising)."""
import gdb

from pyhang.analysis.eval_frames import pair_indices
from pyhang.analysis.python_state import gil_state, python_frames
from pyhang.model.kinds import LocalKind, PythonStatus
from pyhang.model.report import FramesOmitted, PythonFrame
from pyhang.render import values as text
from pyhang.render.names import c_call_line
from pyhang.render.text import py_bt_header, python_status_line
from pyhang_gdb import collect, decoders, facts, thread_apply
from pyhang_gdb.commands.base import PyhangCommand, no_arguments
from pyhang_gdb.frame_filter import native_names
from pyhang_gdb.session import SESSION

def _selection():
    """{tid: (index of the selected Python frame, gdb's frame level then)}, for this stop."""
    return SESSION.cached("py-frame-selection", dict)


def _gdb_level():
    try:
        return gdb.selected_frame().level()
    except gdb.error:
        return 0


def _select_gdb_frame(level):
    frame = gdb.newest_frame()
    for _ in range(level):
        frame = frame.older()
        if frame is None:
            return
    frame.select()


class _Frames:
    """The selected thread's Python frames and the selected one."""

    def __init__(self):
        snap, view = collect.selected_thread(0)
        self.tid = snap.tid
        self.frames = []
        self.status_line = python_status_line(view.status) if not view.ok else None
        thread = view.thread(snap.tid) if view.status in (PythonStatus.OK, PythonStatus.FINALIZING) else None
        self.omitted = None
        if thread is not None:
            self.frames = thread.frames
            if thread.frames_omitted:   # a stack too deep to keep whole pairs from both ends
                self.omitted = FramesOmitted(at=thread.frames_omitted_at, count=thread.frames_omitted)
        self._pairs = None
        stored, level = _selection().get(self.tid), _gdb_level()
        if stored and stored[1] == level:  # gdb's frame is where the last py-up/py-down left it
            index = stored[0]
        else:  # gdb's frame moved (`frame N`, `up`, `down`): follow it
            index = 0 if level == 0 else self._index_at_or_above(level)
            if index is None:
                index = stored[0] if stored else 0
            if stored or level:
                _selection()[self.tid] = (index, level)
        self.index = min(index, len(self.frames) - 1) if self.frames else 0

    def pairs(self):
        """{gdb frame level: [indices of the Python frames it runs]}; {} when unpaired."""
        if self._pairs is None:
            self._pairs = pair_indices(native_names(gdb.selected_thread()), self.frames, self.omitted) \
                if self.frames else {}
        return self._pairs

    def _index_at_or_above(self, level):
        runs = [(lv, run) for lv, run in self.pairs().items() if lv >= level]
        return min(runs)[1][0] if runs else None

    def empty_line(self):
        """Why there is no frame to show, in one line."""
        return self.status_line or text.NO_FRAME

    @property
    def frame(self):
        return self.frames[self.index] if self.frames else None

    def number(self, index):
        """The frame's number as py-bt counts them (render.values.frame_number)."""
        return text.frame_number(index, self.omitted)

    def crosses_middle(self, index, target):
        """Whether a move from `index` to `target` passes over the omitted middle of a deep stack."""
        return self.omitted is not None and min(index, target) < self.omitted.at <= max(index, target)

    def omitted_line(self):
        return text.omitted_line(self.omitted, len(self.frames))

    def select(self, index):
        self.index = index
        level = next((lv for lv, run in self.pairs().items() if index in run), None)
        if level is not None:
            _select_gdb_frame(level)
        _selection()[self.tid] = (index, _gdb_level())


def _python_frame(f):
    return PythonFrame(f.function, f.file, f.line)


def _locals(frame):
    return facts.facts().frame_locals([[frame.frame, frame.code]])[0]


def _source(path):
    """(lines, None) of a source file as the target sees it (pyhang.sources: a live process's root,
    a core's sysroot), or (None, why it cannot be read); read once per stop."""
    return facts.facts().source_files().read(path)


def _arguments(frame):
    return [v for v in _locals(frame).locals if v.kind == LocalKind.ARGUMENT]


def _summary(index, frame, arguments=None):
    """A frame's header line and its current source line (when the file is readable)."""
    out = [text.frame_header(index, _python_frame(frame), arguments)]
    lines, _ = _source(frame.file)
    current = text.source_line(lines, frame.line)
    if current:
        out.append(current)
    return out


class PyLocals(PyhangCommand):
    """pyhang-py-locals: the locals of the selected Python frame, one `name = value` a line:
arguments, locals, cells and free variables, then (module level) the frame's f_locals dict.
Values are read from memory, bounded in size.  Also registered as `py-locals`."""
    name = "pyhang-py-locals"

    def run(self, argv):
        no_arguments(self.name, "locals of the selected Python frame", argv)
        frames = _Frames()
        if frames.frame is None:
            print(frames.empty_line())
            return
        fl = _locals(frames.frame)
        print("\n".join(text.locals_lines(fl.locals, fl.problem)))


class PyPrint(PyhangCommand):
    """pyhang-py-print NAME: the value of NAME in the selected Python frame: a local, else a
global of the frame's module, else a builtin.  Also registered as `py-print`."""
    name = "pyhang-py-print"

    def run(self, argv):
        if len(argv) != 1:
            print("usage: py-print NAME")
            return
        name = argv[0]
        frames = _Frames()
        if frames.frame is None:
            print(frames.empty_line())
            return
        fl = _locals(frames.frame)
        values = decoders.python_values()
        for local in fl.locals:
            if local.name == name:
                print(text.print_line("local", name, local))
                return
        for scope, where in (("global", fl.globals), ("builtin", fl.builtins)):
            address = values.lookup(where, name) if where else None
            if address:
                print(text.print_line(scope, name, values.render(address)))
                return
        print(text.print_line(None, name, None))


class PyList(PyhangCommand):
    """pyhang-py-list [START[,END]]: the source around the selected Python frame's current line
(marked with `>`), read from the file its code object names.  Also registered as `py-list`."""
    name = "pyhang-py-list"

    def run(self, argv):
        start = end = None
        if argv:
            try:
                parts = "".join(argv).split(",")
                start = int(parts[0])
                end = int(parts[1]) if len(parts) > 1 and parts[1] else None
            except ValueError:
                print("usage: py-list [START[,END]]")
                return
        frames = _Frames()
        frame = frames.frame
        if frame is None:
            print(frames.empty_line())
            return
        lines, why = _source(frame.file)
        if lines is None:
            print(text.unreadable_source(frame.file, why))
            return
        first, last = text.source_window(frame.line, start, end)
        print("\n".join(text.source_lines(lines, frame.line, first, last)))


class _Move(PyhangCommand):
    step = 0
    end_line = ""

    def run(self, argv):
        no_arguments(self.name, "select another Python frame", argv)
        frames = _Frames()
        if frames.frame is None:
            print(frames.empty_line())
            return
        target = frames.index + self.step
        if not 0 <= target < len(frames.frames):
            print(self.end_line)
            return
        crossed = frames.crosses_middle(frames.index, target)
        frames.select(target)
        print("\n".join(([frames.omitted_line()] if crossed else []) +
                        _summary(frames.number(target), frames.frame, _arguments(frames.frame))))


class PyUp(_Move):
    """pyhang-py-up: select the caller of the selected Python frame (an older one) and show it
with its arguments and current source line.
Also registered as `py-up`."""
    name = "pyhang-py-up"
    step = 1
    end_line = text.OLDEST


class PyDown(_Move):
    """pyhang-py-down: select the Python frame the selected one called (a newer one) and show it
with its arguments and current source line.
Also registered as `py-down`."""
    name = "pyhang-py-down"
    step = -1
    end_line = text.NEWEST


class PyBtFull(PyhangCommand):
    """pyhang-py-bt-full: the Python stack of the selected thread, innermost first, each frame
with its arguments and current source line.  Also registered as `py-bt-full`."""
    name = "pyhang-py-bt-full"

    def run(self, argv):
        no_arguments(self.name, "Python backtrace with arguments", argv)
        frames = _Frames()
        if not frames.frames:
            print(frames.empty_line())
            return
        # The thread and its GIL state first, as py-bt says them.
        snap, view = collect.selected_thread(0)
        gil = gil_state(view, snap.tid, snap.registers)
        pt = view.thread(snap.tid)
        out = [py_bt_header(snap.num, snap.tid, view.version, gil, pt.interp_id if pt is not None else None,
                            named=not thread_apply.named(snap))]
        # What each frame calls in C, a line of its own above it (as py-bt shows it)
        analysed = python_frames(view, snap.tid, gil=gil)
        rows = []
        for i, f in enumerate(frames.frames):
            c_call = analysed[i].c_call if i < len(analysed) else None
            lines, _ = _source(f.file)
            rows.append((_python_frame(f), _arguments(f), c_call_line(c_call) if c_call is not None else None,
                         text.source_line(lines, f.line)))
        out.extend(text.bt_full_lines(rows, frames.omitted))
        print("\n".join(out))


COMMANDS = (PyLocals, PyPrint, PyList, PyUp, PyDown, PyBtFull)

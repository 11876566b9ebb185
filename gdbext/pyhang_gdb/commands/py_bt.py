"""`pyhang-py-bt` and `py-bt`: the Python stack of the selected thread."""
from pyhang.analysis.python_state import gil_state, python_frames
from pyhang.analysis.sources import add_frame_sources
from pyhang.model.kinds import PythonStatus
from pyhang.render.text import python_status_line, render_py_bt
from pyhang_gdb import collect, facts, thread_apply
from pyhang_gdb.commands.base import PyhangCommand, no_arguments


class PythonBacktrace(PyhangCommand):
    """pyhang-py-bt: the Python stack of the selected thread, innermost first,
decoded from target memory (no debug symbols needed), each frame's source line (read from the
target's own files: a live process's root, a core's sysroot), and its GIL state.
Works under `thread apply all`.  Also registered as `py-bt` unless
libpython.py already defined it."""
    name = "pyhang-py-bt"

    def run(self, argv):
        no_arguments(self.name, "Python backtrace of the selected thread", argv)
        snap, view = collect.selected_thread(0)
        if not view.ok and view.status != PythonStatus.FINALIZING:
            print(python_status_line(view.status))
            return
        gil = gil_state(view, snap.tid, snap.registers)
        frames = python_frames(view, snap.tid, gil=gil)
        add_frame_sources(facts.facts(), frames)  # read from the target's files, once per file and stop
        print(render_py_bt(snap.num, snap.tid, view.version, gil, view.thread(snap.tid), frames,
                           named=not thread_apply.named(snap)))


class PyBt(PythonBacktrace):
    __doc__ = PythonBacktrace.__doc__
    name = "py-bt"

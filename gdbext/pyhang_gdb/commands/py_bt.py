"""`pyhang-py-bt` and `py-bt`: the Python stack of the selected thread, from
the analysis the command line's `py-bt` words (pyhang_gdb.facts.analysed)."""
from pyhang.model.kinds import CommandFailure
from pyhang_gdb import collect, facts, thread_apply
from pyhang_gdb.commands.base import PyhangCommand, no_arguments
from pyhang_gdb.session import NoTarget, selected_gdb_thread


class PythonBacktrace(PyhangCommand):
    """pyhang-py-bt: the Python stack of the selected thread, innermost first,
decoded from target memory (no debug symbols needed), each frame's source line (read from the
target's own files: a live process's root, a core's sysroot), and its GIL state.
Works under `thread apply all`.  Also registered as `py-bt` unless
libpython.py already defined it."""
    name = "pyhang-py-bt"

    def run(self, argv):
        no_arguments(self.name, "Python backtrace of the selected thread", argv)
        thread = selected_gdb_thread()
        analysed = facts.analysed()
        tid = collect.target_tids().to_target(thread.ptid[1])
        th = analysed.report.thread(tid)
        if th is None:
            raise NoTarget("the selected thread is gone", CommandFailure.NO_THREAD)
        print(analysed.thread_text("py-bt", tid, named=not thread_apply.named(th)))


class PyBt(PythonBacktrace):
    __doc__ = PythonBacktrace.__doc__
    name = "py-bt"

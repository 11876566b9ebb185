"""The gdb commands, one module each; `register()` defines them all."""
import gdb

from pyhang_gdb import frame_filter, settings, thread_apply
from pyhang_gdb.commands import fork_hazards, gcore, gil_holder, lock_owner, py_bt, py_frames, py_tasks, report


def register():
    settings.register()
    frame_filter.register()
    thread_apply.install()
    for cls in report.COMMANDS + (gcore.PyhangGcore, py_bt.PythonBacktrace, gil_holder.GilHolder, lock_owner.LockOwner,
                                  fork_hazards.ForkHazards, py_tasks.PyTasks):
        cls()
    if not _defined("py-bt"):
        py_bt.PyBt()  # libpython.py did not define it
    # libpython.py's names, where it did not define them: the same muscle memory on stripped builds
    for cls in py_frames.COMMANDS:
        cls()
        short = cls.name[len("pyhang-"):]
        if not _defined(short):
            type(cls.__name__ + "Short", (cls,), {"name": short, "__doc__": cls.__doc__})()


def _defined(command):
    try:
        gdb.execute("help " + command, to_string=True)
        return True
    except gdb.error:
        return False

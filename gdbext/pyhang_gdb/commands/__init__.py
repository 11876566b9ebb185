"""The gdb commands, one module each; `register()` defines them all."""
import gdb

from pyhang_gdb import settings
from pyhang_gdb.commands import fork_hazards, gil_holder, lock_owner, py_bt, py_tasks, report


def register():
    settings.register()
    for cls in report.COMMANDS + (py_bt.PythonBacktrace, gil_holder.GilHolder, lock_owner.LockOwner,
                                  fork_hazards.ForkHazards, py_tasks.PyTasks):
        cls()
    try:
        gdb.execute("help py-bt", to_string=True)
    except gdb.error:
        py_bt.PyBt()  # libpython.py did not define it

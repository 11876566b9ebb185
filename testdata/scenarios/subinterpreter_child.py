"""Run inside a subinterpreter by subinterpreters.py.  A subinterpreter
shares no module state with the main one, and an isolated one cannot
import ctypes (truth.py): each thread here writes its own truth to a file
of its own (DIR/ROLE.json), which the main interpreter collects."""
import json
import os
import sys
import threading
import time
import traceback


def _record(directory, role, interpreter, frame):
    stack = [{"function": f.name, "file": f.filename, "line": f.lineno}
             for f in reversed(traceback.extract_stack(frame))]
    path = os.path.join(directory, role + ".json")
    with open(path + ".tmp", "w") as f:
        json.dump({"tid": threading.get_native_id(), "name": role, "role": role, "interpreter": interpreter,
                   "stack": stack, "parked_in": ["clock_nanosleep", "nanosleep"]}, f)
    os.rename(path + ".tmp", path)


def park(directory, role, interpreter):
    # One line: the recorded line is the line the thread sleeps on.
    while True: _record(directory, role, interpreter, sys._getframe(0)); time.sleep(3600)  # noqa: E701,E702


def descend(levels, directory, role, interpreter):
    if levels > 0:
        return descend(levels - 1, directory, role, interpreter)
    park(directory, role, interpreter)


def start_thread(directory, role, interpreter, depth):
    """A thread of this interpreter that parks `depth` calls deep."""
    threading.Thread(target=descend, args=(depth, directory, role, interpreter), name=role).start()

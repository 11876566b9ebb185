"""Scenario: workers blocked in threading's Event.wait, reached from a line
with a non-ASCII name before the call, from a line longer than a report
shows, from code compiled from a string ("<generated>"), and from a module
whose file was deleted after it was imported.

Once every worker sleeps, the main thread records each one's stack from
sys._current_frames() (innermost first): function, file and line, the
line's text as linecache reads it from the process's own file system
(None where it has none), and on 3.11+ the instruction's end line and
columns (traceback's FrameSummary: co_positions()).  That is what pyhang
must show, read from outside.
"""
import importlib
import linecache
import os
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, in_futex_wait  # noqa: E402

TRUTH = Truth()
WAKE = threading.Event()   # never set
TIDS = {}


def nested(depth):
    if depth:
        return nested(depth - 1)
    état_réveil = WAKE.wait()
    return état_réveil


def long_line():
    return WAKE.wait(None) if WAKE is not None and TRUTH is not None and TIDS is not None and threading is not None and time is not None and linecache is not None and traceback is not None else None  # noqa: E501


def generated():
    namespace = {"WAKE": WAKE}
    exec(compile("def from_string():\n    WAKE.wait()\n", "<generated>", "exec"), namespace)
    namespace["from_string"]()


def deleted():
    directory = tempfile.mkdtemp(prefix="pyhang-source-")
    with open(os.path.join(directory, "pyhang_gone_module.py"), "w") as f:
        f.write("def wait_here(wake):\n    wake.wait()\n")
    sys.path.insert(0, directory)
    module = importlib.import_module("pyhang_gone_module")
    os.remove(module.__file__)
    module.wait_here(WAKE)


def worker(role, body):
    TIDS[threading.get_ident()] = (role, gettid())
    body()


def frame_record(frame):
    """A frame as traceback sees it, with its line from linecache and (3.11+)
    the position co_positions() gives its last instruction."""
    summary = traceback.extract_stack(frame, limit=1)[0]
    linecache.checkcache(summary.filename)
    text = linecache.getline(summary.filename, summary.lineno) if summary.lineno else ""
    record = {"function": summary.name, "file": summary.filename, "line": summary.lineno,
              "source": text.rstrip("\r\n") or None, "end_line": None, "col": None, "end_col": None}
    if hasattr(frame.f_code, "co_positions"):
        _, end_line, col, end_col = list(frame.f_code.co_positions())[frame.f_lasti // 2]
        record.update(end_line=end_line, col=col, end_col=end_col)
    return record


def stack_of(frame):
    out = []
    while frame is not None:
        out.append(frame_record(frame))
        frame = frame.f_back
    return out


def main():
    bodies = {"nested": lambda: nested(2), "long": long_line, "generated": generated, "deleted": deleted}
    for role, body in bodies.items():
        threading.Thread(target=worker, args=(role, body), name=role, daemon=True).start()
    while True:   # every worker asleep on its Event, at the line it will stay on
        frames = sys._current_frames()
        asleep = [ident for ident, (_, tid) in list(TIDS.items())
                  if ident in frames and frames[ident].f_code.co_name == "wait" and in_futex_wait(tid)]
        if len(asleep) == len(bodies):
            break
        time.sleep(0.02)
    frames = sys._current_frames()
    for ident, (role, tid) in TIDS.items():
        TRUTH.thread(tid=tid, name=role, role=role, stack=stack_of(frames[ident]))
    TRUTH.write_and_signal_ready()
    WAKE.wait()


main()

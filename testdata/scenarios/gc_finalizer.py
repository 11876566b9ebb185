"""Scenario: a garbage collection that cannot end.  A "collector" thread
calls gc.collect(); the garbage it finds is a reference cycle whose object
has a __del__ that takes a threading.Lock a "holder" thread holds forever.
The collector sleeps inside the finalizer, inside the collection (the
interpreter's gc.collecting stays set), until the process is killed.

It records both threads (with their roles), and that gc.collect() run by
another thread meanwhile returned 0 at once (a collection was already
running).
"""
import gc
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, in_futex_wait  # noqa: E402

TRUTH = Truth()
LOCK = threading.Lock()
HELD = threading.Event()
FOREVER = threading.Event()   # never set
TIDS = {}


class Resource:
    def __init__(self):
        self.me = self   # a cycle: only the collector frees it

    def __del__(self):
        with LOCK:   # held by the holder: the collection waits here
            pass


def holder():
    TIDS["holder"] = (threading.get_ident(), gettid())
    with LOCK:
        HELD.set()
        FOREVER.wait()


def collector():
    TIDS["collector"] = (threading.get_ident(), gettid())
    HELD.wait()
    Resource()
    gc.collect()


def in_finalizer(ident):
    frame = sys._current_frames().get(ident)
    return frame is not None and frame.f_code.co_name == "__del__"


def main():
    gc.disable()   # no automatic collection but the one the collector starts
    threading.Thread(target=holder, name="holder", daemon=True).start()
    threading.Thread(target=collector, name="collector", daemon=True).start()
    while "collector" not in TIDS or not in_finalizer(TIDS["collector"][0]) or not in_futex_wait(TIDS["collector"][1]):
        time.sleep(0.02)
    for role, (_, tid) in TIDS.items():
        TRUTH.thread(tid=tid, name=role, role=role)
    TRUTH.write_and_signal_ready(collect_meanwhile=gc.collect())
    FOREVER.wait()


main()

"""Benchmark workload: T threads, each D Python frames deep, all parked on
one threading.Event (so every thread is blocked on a Python lock), plus the
main thread.  usage: many_threads.py T D"""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid  # noqa: E402

TRUTH = Truth()
T = int(sys.argv[1]) if len(sys.argv) > 1 else 256
D = int(sys.argv[2]) if len(sys.argv) > 2 else 50
never = threading.Event()
ready = threading.Semaphore(0)


def descend(levels):
    if levels > 1:
        return descend(levels - 1)
    TRUTH.thread(tid=gettid(), role="worker")
    ready.release()
    never.wait()


threading.stack_size(256 * 1024)
for _ in range(T):
    threading.Thread(target=descend, args=(max(1, D - 3),), daemon=True).start()
for _ in range(T):
    ready.acquire()
TRUTH.thread(tid=gettid(), role="main")
TRUTH.write_and_signal_ready(T=T, D=D)
never.wait()

"""Scenario: the classic hang of case 5's shape.  One thread calls a C
function that blocks (libc's pause) through ctypes.PyDLL, which keeps the
GIL held during the call; K other threads try to run Python and wait for the
GIL forever; the main thread waits for the GIL too.
usage: gil_held_in_native.py [K]
"""
import ctypes
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
K = int(sys.argv[1]) if len(sys.argv) > 1 else 3
libc_keeping_gil = ctypes.PyDLL(None)  # PyDLL: calls do not release the GIL
started = threading.Semaphore(0)


def want_python(index):
    set_os_thread_name("gil-waiter-%d" % index)
    TRUTH.thread(tid=gettid(), name="gil-waiter-%d" % index, role="waiter")
    started.release()
    n = 0
    while True:
        n += 1


def hold_gil_and_block():
    set_os_thread_name("gil-holder")
    TRUTH.thread(tid=gettid(), name="gil-holder", role="holder")
    TRUTH.write_and_signal_ready()
    libc_keeping_gil.pause()  # blocks forever with the GIL held


def main():
    set_os_thread_name("gil-main")
    for i in range(K):
        threading.Thread(target=want_python, args=(i,), daemon=True).start()
    for _ in range(K):
        started.acquire()
    TRUTH.thread(tid=gettid(), name="gil-main", role="waiter")
    holder = threading.Thread(target=hold_gil_and_block, daemon=True)
    holder.start()
    n = 0
    while True:  # the main thread wants the GIL too
        n += 1


main()

"""Scenario: K threads spin in pure Python (the GIL passes between them every
switch interval), and the main thread sleeps with the GIL released.
Records the spinners' and the main thread's TIDs.  usage: gil_contention.py [K]
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
K = int(sys.argv[1]) if len(sys.argv) > 1 else 4
started = threading.Semaphore(0)


def spin(index):
    set_os_thread_name("spinner-%d" % index)
    # Spinners are busy, not parked: the harness must not wait for them to sleep.
    TRUTH.thread(tid=gettid(), name="spinner-%d" % index, role="spinner", parked=False)
    started.release()
    n = 0
    while True:
        n += 1


def main():
    set_os_thread_name("contention-main")
    for i in range(K):
        threading.Thread(target=spin, args=(i,), daemon=True).start()
    for _ in range(K):
        started.acquire()
    TRUTH.thread(tid=gettid(), name="contention-main", role="sleeper")
    TRUTH.write_and_signal_ready()
    while True:
        time.sleep(3600)


main()

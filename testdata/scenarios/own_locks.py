"""Scenario: N threads, each blocked on its own threading.Lock, which the
main thread holds (so no two threads wait on the same lock).
usage: own_locks.py N"""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid  # noqa: E402

TRUTH = Truth()
N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
started = threading.Semaphore(0)


def wait_on(lock):
    TRUTH.thread(tid=gettid(), role="waiter", lock=id(lock))
    started.release()
    lock.acquire()


def main():
    threading.stack_size(128 * 1024)
    locks = [threading.Lock() for _ in range(N)]
    for lock in locks:
        lock.acquire()
        threading.Thread(target=wait_on, args=(lock,), daemon=True).start()
    for _ in range(N):
        started.acquire()
    TRUTH.thread(tid=gettid(), role="main", parked=False)
    TRUTH.write_and_signal_ready(n=N)
    threading.Event().wait()


main()

"""Scenario: two threads take two Python locks in opposite orders (ABBA) and
deadlock.  With `Lock`, neither lock records its owner; with `RLock`, both
do.  usage: lock_abba.py Lock|RLock"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402

TRUTH = Truth()
KIND = sys.argv[1] if len(sys.argv) > 1 else "Lock"
lock_a = getattr(threading, KIND)()
lock_b = getattr(threading, KIND)()
both_hold = threading.Barrier(3)


def take(first, second, name, role):
    set_os_thread_name(name)
    with first:
        TRUTH.thread(tid=gettid(), name=name, role=role)
        both_hold.wait()
        with second:
            pass


def main():
    set_os_thread_name("abba-main")
    threading.Thread(target=take, args=(lock_a, lock_b, "holds-a", "holds-a-wants-b"), daemon=True).start()
    threading.Thread(target=take, args=(lock_b, lock_a, "holds-b", "holds-b-wants-a"), daemon=True).start()
    both_hold.wait()
    TRUTH.thread(tid=gettid(), name="abba-main", role="main")
    TRUTH.write_and_signal_ready(kind=KIND, a=id(lock_a), b=id(lock_b))
    while True:
        time.sleep(3600)


main()

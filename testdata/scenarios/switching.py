"""Scenario: threads that never stay parked: one spins in pure Python, one
switches between two stacks every millisecond (each sleeps 1 ms in its own
function), and the main thread sleeps.  Records the TIDs and the two
functions the switcher runs.  usage: switching.py"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
started = threading.Semaphore(0)


def spin():
    set_os_thread_name("spinner")
    TRUTH.thread(tid=gettid(), role="spinner", parked=False)
    started.release()
    n = 0
    while True:
        n += 1


def first_stack():
    time.sleep(0.001)


def second_stack():
    time.sleep(0.001)


def switch():
    set_os_thread_name("switcher")
    TRUTH.thread(tid=gettid(), role="switcher", parked=False, functions=["first_stack", "second_stack"])
    started.release()
    while True:
        first_stack()
        second_stack()


def main():
    set_os_thread_name("switching-main")
    for target in (spin, switch):
        threading.Thread(target=target, daemon=True).start()
    for _ in range(2):
        started.acquire()
    # (time.sleep is select(2) or pselect6(2) before 3.11)
    TRUTH.thread(tid=gettid(), role="sleeper", parked_in=["clock_nanosleep", "select", "pselect6"])
    TRUTH.write_and_signal_ready()
    time.sleep(3600)


main()

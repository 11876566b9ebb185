"""Scenario: a thread that waits on an Event nothing in the process sets,
while another thread runs (a CPU loop): one look cannot tell whether the
runner will set it; a second look sees the runner move and the waiter not.

Truth: each thread's role and TID, the Event's id.  Works on every Python
from 3.6 on."""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
DONE = threading.Event()
started = threading.Semaphore(0)


def runner():
    set_os_thread_name("runner")
    TRUTH.thread(tid=gettid(), name="runner", role="runner", parked=False)
    started.release()
    n = 0
    while True:          # runs for ever: never sets DONE
        n += 1


def main():
    set_os_thread_name("waiter-main")
    threading.Thread(target=runner, daemon=True).start()
    started.acquire()
    TRUTH.thread(tid=gettid(), name="waiter-main", role="waiter")
    TRUTH.write_and_signal_ready(event=id(DONE))
    DONE.wait()


main()

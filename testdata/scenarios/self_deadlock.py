"""Scenario: a thread waits for a threading.Lock it acquired itself further
down its own stack.  A Lock is not re-entrant: the wait never ends.

usage: self_deadlock.py with|signal
  with    a worker's method holds `self._lock` (inside `with`) and calls
          another method that takes it again; the main thread joins it
  signal  the main thread holds a lock (inside `with`) when a signal
          arrives, and the handler takes the same lock

The truth: the waiting thread (role "waits-for-itself"), the lock's id,
and the line of the frame that holds it (`held_at`: function and line)."""
import os
import signal
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[1] if len(sys.argv) > 1 else "with"


class Counter:
    def __init__(self):
        self._lock = threading.Lock()
        self.value = 0

    def add(self, n):
        with self._lock:
            self.value += n
            self.report()             # the outer frame holds the lock here

    def report(self):
        TRUTH.thread(tid=gettid(), name="self-waiter", role="waits-for-itself")
        holder = sys._getframe(1)
        TRUTH.write_and_signal_ready(mode=MODE, lock=id(self._lock),
                                     held_at={"function": holder.f_code.co_name, "line": holder.f_lineno})
        with self._lock:              # waits for ever
            print(self.value)


def with_mode():
    def work():
        set_os_thread_name("self-waiter")
        Counter().add(1)

    set_os_thread_name("self-main")
    worker = threading.Thread(target=work, name="counter")
    worker.start()
    TRUTH.thread(tid=gettid(), name="self-main", role="main")
    worker.join()


config_lock = threading.Lock()


def on_signal(signum, frame):
    TRUTH.thread(tid=gettid(), name="self-main", role="waits-for-itself")
    TRUTH.write_and_signal_ready(mode=MODE, lock=id(config_lock), handler="on_signal", signal=signum,
                                 held_at={"function": frame.f_code.co_name, "line": frame.f_lineno})
    with config_lock:                 # the interrupted frame below holds it
        pass


def reload():
    with config_lock:
        os.kill(os.getpid(), signal.SIGUSR1)
        threading.Event().wait(0.1)   # the handler runs here or just before, the lock held


def signal_mode():
    set_os_thread_name("self-main")
    signal.signal(signal.SIGUSR1, on_signal)
    reload()


with_mode() if MODE == "with" else signal_mode()

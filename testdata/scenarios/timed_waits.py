"""Scenario: waits with a timeout, which a stop (gdb's attach) interrupts
and the kernel resumes through restart_syscall:

  lock-timed       LOCK.acquire(timeout=3600); main holds LOCK
  condition-timed  CONDITION.wait(timeout=3600)
  event-timed      EVENT.wait(3600)
  poll-timed       poll() on the read end of a pipe nobody writes, 3600 s
  main             holds LOCK, sleeps

Truth: each thread's role and TID, the ids of LOCK, CONDITION and EVENT,
the pipe's read fd.  Works on every Python from 3.6 on."""
import os
import select
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
LOCK = threading.Lock()
CONDITION = threading.Condition()
EVENT = threading.Event()
READ_END, WRITE_END = os.pipe()
started = threading.Semaphore(0)


def record(role, **extra):
    set_os_thread_name(role)
    TRUTH.thread(tid=gettid(), name=role, role=role, **extra)
    started.release()


def lock_timed():
    record("lock-timed")
    LOCK.acquire(timeout=3600)


def condition_timed():
    with CONDITION:
        record("condition-timed")
        CONDITION.wait(timeout=3600)


def event_timed():
    record("event-timed")
    EVENT.wait(3600)


def poll_timed():
    poller = select.poll()
    poller.register(READ_END, select.POLLIN)
    record("poll-timed", parked_in=["poll", "ppoll"])   # ppoll(2) from 3.15
    poller.poll(3600 * 1000)


def main():
    set_os_thread_name("timed-main")
    TRUTH.thread(tid=gettid(), name="timed-main", role="main")
    LOCK.acquire()
    for target in (lock_timed, condition_timed, event_timed, poll_timed):
        threading.Thread(target=target, daemon=True).start()
    for _ in range(4):
        started.acquire()
    time.sleep(0.3)
    TRUTH.write_and_signal_ready(lock=id(LOCK), condition=id(CONDITION), event=id(EVENT), read_fd=READ_END)
    while True:
        time.sleep(3600)


main()

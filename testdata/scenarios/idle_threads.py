"""Scenario: a process most of whose threads are idle by design, and two
that are not.

  event-idle      N threads (argv[1], default 24) in STOP.wait(): a
                  server's stop event, never set
  pool-idle       the 3 workers of POOL, a ThreadPoolExecutor that ran
                  its tasks and waits for more (pool_queue: its queue)
  condition-idle  CONDITION.wait(), never notified
  joined          waits on DONE, never set; `joiner` joins it, so it is
                  not idle: a thread waits on it
  joiner          JOINED.join()
  main            waits on RESULT, never set: when the main thread
                  waits, the program waits

Truth: each thread's role and TID; object ids of STOP, CONDITION, DONE,
RESULT and the pool's queue.  Works on every Python from 3.6 on."""
import concurrent.futures
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
IDLERS = int(sys.argv[1]) if len(sys.argv) > 1 else 24
STOP = threading.Event()
CONDITION = threading.Condition()
DONE = threading.Event()
RESULT = threading.Event()
POOL = concurrent.futures.ThreadPoolExecutor(max_workers=3)
EVERY_WORKER = threading.Barrier(3)   # three tasks at once: each runs on its own worker
started = threading.Semaphore(0)


def record(role):
    set_os_thread_name(role)
    TRUTH.thread(tid=gettid(), name=role, role=role)
    started.release()


def event_idle():
    record("event-idle")
    STOP.wait()


def condition_idle():
    with CONDITION:
        record("condition-idle")
        CONDITION.wait()


def joined():
    record("joined")
    DONE.wait()


def pool_task():
    EVERY_WORKER.wait()
    record("pool-idle")


def main():
    set_os_thread_name("idle-main")
    TRUTH.thread(tid=gettid(), name="idle-main", role="main")
    for _ in range(IDLERS):
        threading.Thread(target=event_idle, daemon=True).start()
    threading.Thread(target=condition_idle, daemon=True).start()
    waited = threading.Thread(target=joined, daemon=True)
    waited.start()
    threading.Thread(target=lambda: (record("joiner"), waited.join()), daemon=True).start()
    for f in [POOL.submit(pool_task) for _ in range(3)]:
        f.result()
    for _ in range(IDLERS + 3 + 3):
        started.acquire()
    time.sleep(0.3)   # each thread from its record to its wait
    TRUTH.write_and_signal_ready(stop=id(STOP), condition=id(CONDITION), done=id(DONE), result=id(RESULT),
                                 pool_queue=id(POOL._work_queue))
    RESULT.wait()


main()

"""Scenario: a ThreadPoolExecutor starves itself (each of its 2 workers runs
a task that submits another task to the same pool and waits for its
result, which no worker is free to run), while the main thread waits for
the outer tasks, as the program's own code does it:

  as_completed   for f in concurrent.futures.as_completed(outer): ...
  wait           concurrent.futures.wait(outer)
  result         outer[0].result()

The main thread can only go on when a worker does: it is part of the
starvation, not a wait whose owners are unknown.

Truth: the main thread (role main), each worker (role worker-N) with the
id() of the inner future it waits for (inner) and of the outer future it
runs (outer), the pool's work queue (pool_queue), the mode.  Works on every
Python from 3.6 on.  usage: starved_pool.py MODE
"""
import concurrent.futures
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[1] if len(sys.argv) > 1 else "as_completed"
POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2)
BOTH_BUSY = threading.Barrier(2)   # both workers hold a task before either submits another
INNER = []


def outer_task(i):
    set_os_thread_name("worker-%d" % i)
    BOTH_BUSY.wait()
    inner = POOL.submit(time.sleep, 0)   # queued behind this task: both workers are busy
    INNER.append(inner)
    TRUTH.thread(tid=gettid(), name="worker-%d" % i, role="worker-%d" % i, inner=id(inner), task=i)
    return inner.result()


def announce(outer):
    """Once both workers wait on their inner futures and main waits on the outer ones: ready."""
    deadline = time.monotonic() + 30
    waited = outer[:1] if MODE == "result" else outer
    while len(INNER) < 2 or not all(f._condition._waiters for f in INNER) or \
            not all(f._waiters or f._condition._waiters for f in waited):
        if time.monotonic() > deadline:
            raise SystemExit("starved_pool: the threads did not reach their waits")
        time.sleep(0.01)
    time.sleep(0.3)
    for t in TRUTH.data["threads"]:
        if "task" in t:
            t["outer"] = id(outer[t["task"] - 1])
    TRUTH.write_and_signal_ready(mode=MODE, pool_queue=id(POOL._work_queue))


def main():
    set_os_thread_name("main")
    TRUTH.thread(tid=gettid(), name="main", role="main")
    outer = [POOL.submit(outer_task, i) for i in (1, 2)]
    threading.Thread(target=announce, args=(outer,), daemon=True).start()
    if MODE == "as_completed":
        for f in concurrent.futures.as_completed(outer):
            print(f.result())
    elif MODE == "wait":
        concurrent.futures.wait(outer)
    elif MODE == "result":
        outer[0].result()
    else:
        raise SystemExit("starved_pool: unknown mode %r" % MODE)


main()

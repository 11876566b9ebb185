"""Scenario: threads blocked on Python-level objects, each recording the
id() of the object it waits on (object_id) and its role:

  queue-getter     Queue.get on an empty queue.Queue
  queue-putter     Queue.put on a full queue.Queue(maxsize=1)
  sem-waiter       threading.Semaphore(0).acquire()
  event-waiter     threading.Event().wait(), never set
  barrier-waiter   threading.Barrier(3).wait(), alone at it
  future-waiter    concurrent.futures.Future().result(), never completed
  importer         imports py_objects_slow_module, whose top level blocks
                   on an Event: it holds that module's import lock
  import-waiter    imports the same module: waits for that import lock,
                   owned by the importer (object_id: None)
  pool-worker-N    the 2 workers of POOL, a ThreadPoolExecutor: each runs a
                   task that submits another to POOL and waits for its
                   result (object_id: that future), which no worker is free
                   to run (starvation; pool_queue: the pool's work queue)
  main             sleeps

Works on every Python from 3.6 on.  usage: py_objects.py
"""
import concurrent.futures
import os
import queue
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
EMPTY = queue.Queue()
FULL = queue.Queue(maxsize=1)
FULL.put("only item")
SEM = threading.Semaphore(0)
EVENT = threading.Event()
BARRIER = threading.Barrier(3)
FUTURE = concurrent.futures.Future()
ready = threading.Semaphore(0)


def role(name, obj, call):
    set_os_thread_name(name)
    TRUTH.thread(tid=gettid(), name=name, role=name, object_id=id(obj) if obj is not None else None)
    ready.release()
    call()


def importer():
    set_os_thread_name("importer")
    TRUTH.thread(tid=gettid(), name="importer", role="importer", object_id=None)
    import py_objects_slow_module  # noqa: F401  (blocks in its top level, holding its import lock)


def import_waiter():
    py_objects_slow_module_started.wait()
    role("import-waiter", None, lambda: __import__("py_objects_slow_module"))


WAITS = [
    ("queue-getter", EMPTY, EMPTY.get),
    ("queue-putter", FULL, lambda: FULL.put("one too many")),
    ("sem-waiter", SEM, SEM.acquire),
    ("event-waiter", EVENT, EVENT.wait),
    ("barrier-waiter", BARRIER, BARRIER.wait),
    ("future-waiter", FUTURE, FUTURE.result),
]

py_objects_slow_module_started = threading.Event()
POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2)
POOL_WAITS = []   # the futures the pool's workers wait for
POOL_BUSY = threading.Barrier(2)   # both workers hold a task before either submits another


def pool_task(i):
    name = "pool-worker-%d" % i
    set_os_thread_name(name)
    POOL_BUSY.wait()
    inner = POOL.submit(time.sleep, 0)   # queued behind this task: both workers are busy
    TRUTH.thread(tid=gettid(), name=name, role=name, object_id=id(inner))
    POOL_WAITS.append(inner)
    ready.release()
    inner.result()


def main():
    set_os_thread_name("objects-main")
    TRUTH.thread(tid=gettid(), name="objects-main", role="main", object_id=None)
    os.environ["PY_OBJECTS_STARTED"] = "1"
    for name, obj, call in WAITS:
        threading.Thread(target=role, args=(name, obj, call), name=name + "-py", daemon=True).start()
    threading.Thread(target=importer, name="importer-py", daemon=True).start()
    threading.Thread(target=import_waiter, name="import-waiter-py", daemon=True).start()
    for i in (1, 2):
        POOL.submit(pool_task, i)
    for _ in range(len(WAITS) + 1 + 2):
        ready.acquire()
    # each worker is inside result() once its waiter lock is in the future's condition
    deadline = time.monotonic() + 30
    while not all(f._condition._waiters for f in POOL_WAITS):
        if time.monotonic() > deadline:
            raise SystemExit("py_objects: the pool's workers did not wait for their futures")
        time.sleep(0.01)
    time.sleep(0.3)
    TRUTH.write_and_signal_ready(module="py_objects_slow_module", pool_queue=id(POOL._work_queue))
    while True:
        time.sleep(3600)


main()

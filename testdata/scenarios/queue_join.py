"""Scenario: queues whose waits nothing will end.

usage: queue_join.py skipped|busy|full|atexit
  skipped  the main thread waits in Queue.join() for WORK, whose two
           consumers took every item and now wait in get() for more; one
           of them skipped task_done() for an item (an exception path):
           nothing will ever call task_done(), the join never returns
  busy     the same join while one consumer still works on its item (it
           waits on an Event nothing sets yet): the join waits for that
           consumer, which can still call task_done(); what is wrong is
           that consumer's own wait
  full     a producer waits in put() on FULL, a bounded queue that no
           other thread reaches any more (its consumer exited)
  atexit   skipped, but the join is an atexit callback's (`flush`): the
           module's code has returned, threading._shutdown is done (the
           consumers are daemon threads), and the process cannot end

Truth: each thread's role and TID, the queue's id, unfinished tasks and
length as the program sees them.  Works on every Python from 3.6 on."""
import atexit
import os
import queue
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[1] if len(sys.argv) > 1 else "skipped"
SLOW = threading.Event()


def consumer(work, role):
    set_os_thread_name(role)
    TRUTH.thread(tid=gettid(), name=role, role=role)
    while True:
        item = work.get()
        if item == "slow":
            SLOW.wait()          # busy: still working on its item
        if item == "skip":
            continue             # an exception path that forgot task_done()
        work.task_done()


def joined(mode):
    work = queue.Queue()
    for item in ("a", "b", "slow" if mode == "busy" else "skip"):
        work.put(item)
    for i in range(2):
        threading.Thread(target=consumer, args=(work, "consumer-%d" % i), daemon=True).start()
    while work.qsize() or work.unfinished_tasks != 1:
        time.sleep(0.01)
    time.sleep(0.3)   # every consumer back in get(), or the slow one in SLOW.wait()
    if mode == "atexit":
        atexit.register(flush, work)
        return        # the module ends: the interpreter exits, and runs flush
    TRUTH.thread(tid=gettid(), name="joiner", role="joiner")
    TRUTH.write_and_signal_ready(mode=mode, queue=id(work), unfinished=work.unfinished_tasks, length=work.qsize())
    work.join()


def flush(work):
    """An exit handler that waits for the queue's work to be done."""
    TRUTH.thread(tid=gettid(), name="joiner", role="joiner")
    TRUTH.write_and_signal_ready(mode="atexit", queue=id(work), unfinished=work.unfinished_tasks,
                                 length=work.qsize(), callback="flush")
    work.join()


def full():
    bounded = queue.Queue(maxsize=1)
    bounded.put("first")
    done = threading.Event()

    def produce(q):
        set_os_thread_name("producer")
        TRUTH.thread(tid=gettid(), name="producer", role="producer")
        done.set()
        q.put("second")              # the consumer is gone: waits for ever

    threading.Thread(target=produce, args=(bounded,), daemon=True).start()
    done.wait()
    time.sleep(0.3)
    TRUTH.thread(tid=gettid(), name="full-main", role="main")
    TRUTH.write_and_signal_ready(mode="full", queue=id(bounded), length=bounded.qsize())
    del bounded
    while True:
        time.sleep(3600)


set_os_thread_name("queue-main")
full() if MODE == "full" else joined(MODE)

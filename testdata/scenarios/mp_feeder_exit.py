"""Scenario: a multiprocessing worker put() a large object on a Queue and
returned.  Its exit runs multiprocessing's finalizers, which join the
Queue's feeder thread; the feeder waits in write() on the full pipe, whose
reader is the parent, which reads only after p.join() (the documented
"joining processes that use queues" deadlock).

Truth: the parent's and the worker's pid, the worker's main thread and its
feeder thread.  Python 3.8 on (Thread.native_id), fork."""
import multiprocessing
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

TRUTH = Truth()
RECORD = os.environ["PYHANG_TRUTH"] + ".worker"
SYS_WRITE, SYS_WAIT4 = 1, 61


def work(q):
    set_os_thread_name("mp-worker")
    q.put(b"x" * (1 << 20))   # more than a pipe holds: the feeder blocks in write()
    feeder = next(t for t in threading.enumerate() if t.name == "QueueFeederThread")
    fork_common.record(RECORD, pid=os.getpid(), tid=gettid(), feeder=feeder.native_id)


def main():
    set_os_thread_name("mp-parent")
    multiprocessing.set_start_method("fork")
    q = multiprocessing.Queue()
    p = multiprocessing.Process(target=work, args=(q,))
    p.start()
    info = fork_common.wait_records([RECORD])[0]
    if fork_common.wait_blocked(p.pid, info["feeder"], nr=SYS_WRITE) is None:
        raise SystemExit("mp_feeder_exit: the feeder did not block")
    TRUTH.thread(tid=gettid(), name="mp-parent", role="parent")
    TRUTH.write_and_signal_ready(worker=info)
    p.join()                  # reads the queue only after the join: never
    q.get()


main()

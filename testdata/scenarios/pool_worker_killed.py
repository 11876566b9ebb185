"""Scenario (a real multiprocessing.Pool): one worker is killed while it
runs a task (SIGKILL, as the OOM killer does).  The pool starts a worker in
its place, but the task is lost: Pool.map waits for its result for ever.
Nothing waits in a cycle: the parent's result handler reads the result
pipe, the workers read the task pipe, the task handler waits for tasks
that will never come.  Truth: the parent's role threads, the killed
worker's PID, the pool's live workers."""
import multiprocessing
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
KILLED = os.environ["PYHANG_TRUTH"] + ".killed"


def task(x):
    if x == 1:
        with open(KILLED, "w") as f:
            f.write(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def report_when_hung(pool):
    time.sleep(1.5)   # the pool has replaced the killed worker, and every other task is done
    with open(KILLED) as f:
        killed = int(f.read())
    TRUTH.write_and_signal_ready(killed=killed, workers=[p.pid for p in pool._pool])


def main():
    set_os_thread_name("pool-main")
    TRUTH.thread(tid=gettid(), name="pool-main", role="main")
    pool = multiprocessing.get_context("fork").Pool(2)
    threading.Thread(target=report_when_hung, args=(pool,), daemon=True).start()
    pool.map(task, range(4))


main()

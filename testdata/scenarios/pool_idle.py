"""Scenario (healthy): a real multiprocessing.Pool between tasks.  The
parent ran one map and sleeps (as a service keeping a pool for its next
requests does); its workers wait for their next task: one reads the
pool's task pipe, the others wait for the pipe's lock (a process-shared
semaphore) to read it after.  Nothing is wrong: every report of a worker,
of the parent and of the tree says so.  Truth: the parent's main thread
(role "main"), the workers' PIDs.  Works on every Python from 3.6 on.
usage: pool_idle.py [WORKERS]"""
import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()


def main():
    set_os_thread_name("pool-main")
    TRUTH.thread(tid=gettid(), name="pool-main", role="main")
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    pool = multiprocessing.get_context("fork").Pool(n)
    assert pool.map(abs, range(-8, 0)) == list(range(8, 0, -1))
    TRUTH.write_and_signal_ready(workers=[p.pid for p in pool._pool])
    while True:
        time.sleep(3600)


main()

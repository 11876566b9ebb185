"""Benchmark workload for tree mode: a multiprocessing Pool('fork') of P
worker processes, each with T threads (its main thread and T - 1 more)
parked on a threading.Event; the parent waits on another.
usage: pool_threads.py P T"""
import multiprocessing
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "testdata", "scenarios"))
from truth import Truth, gettid  # noqa: E402

P = int(sys.argv[1]) if len(sys.argv) > 1 else 32
T = int(sys.argv[2]) if len(sys.argv) > 2 else 8
never = threading.Event()


def start_threads(started):
    for _ in range(T - 1):
        threading.Thread(target=never.wait, daemon=True).start()
    started.put(os.getpid())


if __name__ == "__main__":
    ctx = multiprocessing.get_context("fork")
    started = ctx.Queue()
    pool = ctx.Pool(P, initializer=start_threads, initargs=(started,))
    workers = [started.get() for _ in range(P)]
    truth = Truth()
    truth.thread(tid=gettid(), role="parent")
    truth.write_and_signal_ready(workers=workers, threads_per_worker=T)
    never.wait()

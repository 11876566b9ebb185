"""Scenario (case 4): the parent builds a large list of small Python
objects, a fork Pool's two workers read all of it (every read writes a
refcount, so the pages are copied into each worker), then park.  Truth:
the workers' PIDs and the list's id, length and its global name."""
import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

TRUTH = Truth()
N = 400_000
DATA = ["item-%d" % i for i in range(N)]
RECORDS = os.environ["PYHANG_TRUTH"] + ".worker%d"


def task(i):
    total = 0
    for _ in range(3):
        for s in DATA:  # touches every object's refcount
            total += len(s)
    fork_common.record(RECORDS % i, pid=os.getpid(), tid=gettid(), total=total)
    while True:
        time.sleep(3600)


def report_when_done():
    workers = fork_common.wait_records([RECORDS % i for i in (1, 2)], timeout=60)
    TRUTH.write_and_signal_ready(workers=workers, data=id(DATA), length=len(DATA), where="__main__.DATA")


def main():
    set_os_thread_name("cow-parent")
    TRUTH.thread(tid=gettid(), name="cow-parent", role="main", parked=False)
    import threading
    threading.Thread(target=report_when_done, daemon=True).start()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pool.map(task, [1, 2], chunksize=1)


if __name__ == "__main__":
    main()

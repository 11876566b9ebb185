"""Scenario (case 4 seen from the parent): a DataLoader-style parent builds a
large list of small Python objects (the dataset's records), forks two
workers, sends each an index on its own queue and waits for batches on a
shared result queue with a timeout, as torch's DataLoader does.  Each worker
reads every record (every read writes a refcount, so the pages are copied
into it), then blocks reading a shard pipe that nobody writes: the parent
waits for batches that never come.  multiprocessing's fork Process and
Queues, laid out as torch.utils.data.DataLoader lays out its workers (an
index queue per worker, one data queue, get(timeout=5) in a loop), without
torch's import time.

Truth: the parent's PID, the workers' PID/TID and their Python stack where
they block, the list's id, length and global name.
usage: fork_dataloader.py"""
import multiprocessing
import os
import queue
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

TRUTH = Truth()
N = 400_000
DATA = ["record-%d" % i for i in range(N)]
RECORDS = os.environ["PYHANG_TRUTH"] + ".worker%d"
SHARD_R, SHARD_W = os.pipe()   # the shard every worker reads; nobody writes it


def load_sample(index):
    """The dataset's __getitem__: statistics over all records, then the shard."""
    total = 0
    for _ in range(2):
        for s in DATA:  # touches every object's refcount
            total += len(s)
    worker = (multiprocessing.current_process()._identity or (index,))[0]
    fork_common.record(RECORDS % index, pid=os.getpid(), tid=gettid(), total=total, worker=worker,
                       stack=python_stack(1))
    return os.read(SHARD_R, 1)   # never returns: nobody writes the shard


def worker_loop(index_queue, data_queue):
    set_os_thread_name("loader-worker")
    while True:
        index = index_queue.get()
        data_queue.put((index, load_sample(index)))


def report_when_ready(workers):
    records = fork_common.wait_records([RECORDS % i for i in workers], timeout=90)
    TRUTH.write_and_signal_ready(workers=records, data=id(DATA), length=len(DATA), where="__main__.DATA")


def main():
    # (the index queues are kept: their pipes would close with them)
    data_queue, index_queues, workers = fork_common.start_loader(  # noqa: F841
        multiprocessing.get_context("fork"), worker_loop, 2)
    threading.Thread(target=report_when_ready, args=(range(2),), daemon=True).start()
    while True:   # the DataLoader's _try_get_data: a get with a timeout, then a check that workers live
        try:
            data_queue.get(timeout=5.0)
        except queue.Empty:
            if not all(w.is_alive() for w in workers):
                raise SystemExit("a worker died")


set_os_thread_name("loader-parent")
TRUTH.thread(tid=gettid(), name="loader-parent", role="main", parked=False)
main()

"""Scenario (pyhang job without Slurm): one rank of a job of plain processes
on this machine, its rank in RANK of WORLD_SIZE (the variables torchrun
sets).  Every rank but the last waits in `wait_for_peers` for an Event only
its peers would set (as a rank waits for the others in a collective); the
last rank (the odd one) never gets there: its main thread holds lock A and
waits for lock B, which its thread "prefetch" holds while it waits for A.

Truth: its PID, rank, world size, what its main thread waits in ("peers" or
"deadlock"), the Python stack of that wait, and for the odd rank the
prefetch thread's TID.  No library beyond the standard one; works on every
Python from 3.6 on.  usage: RANK=R WORLD_SIZE=N local_ranks.py
"""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402

TRUTH = Truth()
RANK, WORLD_SIZE = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
PEERS = threading.Event()    # set by no one: the peers this rank waits for are other processes
LOCK_A, LOCK_B = threading.Lock(), threading.Lock()


def wait_for_peers():
    TRUTH.thread(tid=gettid(), name="rank-main", role="main")
    TRUTH.write_and_signal_ready(rank=RANK, world_size=WORLD_SIZE, waits="peers", stack=python_stack())
    PEERS.wait()


def prefetch(holding, main_has_a, tids):
    set_os_thread_name("prefetch")
    tids.append(gettid())
    with LOCK_B:
        holding.set()
        main_has_a.wait()
        with LOCK_A:
            pass


def deadlock():
    holding, main_has_a, tids = threading.Event(), threading.Event(), []
    threading.Thread(target=prefetch, args=(holding, main_has_a, tids), daemon=True).start()
    holding.wait()
    with LOCK_A:
        TRUTH.thread(tid=gettid(), name="rank-main", role="main")
        TRUTH.thread(tid=tids[0], name="prefetch", role="prefetch")
        stack = python_stack()
        # the truth is written beside the wait: the harness waits for both threads to sleep in it
        threading.Thread(target=TRUTH.write_and_signal_ready, daemon=True,
                         kwargs=dict(rank=RANK, world_size=WORLD_SIZE, waits="deadlock", stack=stack,
                                     prefetch_tid=tids[0])).start()
        main_has_a.set()
        with LOCK_B:
            pass


set_os_thread_name("rank-%d" % RANK)
if RANK == WORLD_SIZE - 1:
    deadlock()
else:
    wait_for_peers()

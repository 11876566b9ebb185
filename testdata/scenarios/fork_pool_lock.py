"""Scenario (case 1 with multiprocessing): a parent thread holds a
threading.Lock while a Pool with the fork start method (the default before 3.14) runs a
task that takes the same lock: each worker blocks forever on its copy,
locked by a thread that did not survive fork.  The parent waits in
pool.map.  Mode `rlock`: the lock is a threading.Condition's (an RLock,
which records its owner's pthread_t), held inside `with CONDITION:`.
Truth: the parent's threads, each worker's PID, TID and lock."""
import multiprocessing
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[1] if len(sys.argv) > 1 else "lock"
# `with CONDITION:` takes the RLock of the Condition
LOCK = threading.Condition() if MODE == "rlock" else threading.Lock()
LOCK_ID = id(LOCK._lock) if MODE == "rlock" else id(LOCK)
HELD = threading.Event()
RECORDS = os.environ["PYHANG_TRUTH"] + ".worker%d"


def holder():
    set_os_thread_name("lock-holder")
    TRUTH.thread(tid=gettid(), name="lock-holder", role="holds-lock")
    with LOCK:
        HELD.set()
        while True:
            time.sleep(3600)


def task(i):
    fork_common.record(RECORDS % i, pid=os.getpid(), tid=gettid(), lock=LOCK_ID)
    with LOCK:  # the copy is locked: blocks forever
        return i


def report_when_blocked(pids):
    workers = fork_common.wait_records([RECORDS % i for i in (1, 2)])
    for w in workers:
        fork_common.wait_blocked(w["pid"])
    TRUTH.write_and_signal_ready(workers=workers, lock=LOCK_ID, pool_pids=pids)


def main():
    set_os_thread_name("pool-parent")
    TRUTH.thread(tid=gettid(), name="pool-parent", role="main", parked=False)
    threading.Thread(target=holder, daemon=True).start()
    HELD.wait()
    with multiprocessing.get_context("fork").Pool(2) as pool:  # (3.14 made forkserver the default)
        pids = [p.pid for p in pool._pool]
        threading.Thread(target=report_when_blocked, args=(pids,), daemon=True).start()
        pool.map(task, [1, 2], chunksize=1)


if __name__ == "__main__":
    main()

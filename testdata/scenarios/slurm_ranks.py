"""Scenario (issue 39, PyTorch from Debian, CPU only): one task of a Slurm
job of gloo ranks (`srun -N2 --ntasks-per-node=2 python3.11 slurm_ranks.py
MODE PORT`), its rank SLURM_PROCID of SLURM_NTASKS, rendezvous over TCP on
this host (every node of the test cluster is this machine).  After one
all_reduce together, every rank but the last calls all_reduce again and
the last one (the odd rank) does not join it:

  collective  it calls dist.barrier() instead: the ranks are in different collectives
  deadlock    its main thread takes lock A and waits for lock B, which its
              thread "prefetch" holds while it waits for lock A (a Python
              deadlock: the rank never reaches all_reduce)

Truth, recorded from inside each rank once its main thread sleeps:
$PYHANG_TRUTH.rankN with its PID, main thread's TID, rank, world size, node
(SLURMD_NODENAME), what it waits in (the collective, or "deadlock"), the
Python stack of the call, and in deadlock mode the prefetch thread's TID.
usage: slurm_ranks.py collective|deadlock PORT
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import gettid, python_stack, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

os.environ.setdefault("USE_LIBUV", "0")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

MODE, PORT = sys.argv[1], int(sys.argv[2])
RANK, WORLD_SIZE = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
ODD_RANK = WORLD_SIZE - 1
LOCK_A, LOCK_B = threading.Lock(), threading.Lock()


def record_when_blocked(tid, waits, stack, **extra):
    if fork_common.wait_blocked(os.getpid(), tid, timeout=60) is None:
        sys.exit("rank %d did not block in %s" % (RANK, waits))
    time.sleep(0.3)
    fork_common.record(os.environ["PYHANG_TRUTH"] + ".rank%d" % RANK, pid=os.getpid(), tid=tid, rank=RANK,
                       world_size=WORLD_SIZE, node=os.environ.get("SLURMD_NODENAME"), waits=waits, stack=stack,
                       **extra)


def start_recorder(tid, waits, stack, **extra):
    threading.Thread(target=record_when_blocked, args=(tid, waits, stack), kwargs=extra, daemon=True).start()


def prefetch(holding, tids):
    set_os_thread_name("prefetch")
    tids.append(gettid())
    with LOCK_B:
        holding.set()
        with LOCK_A:     # main holds it, waiting for B
            pass


def deadlock(tid):
    holding, tids = threading.Event(), []
    with LOCK_A:
        threading.Thread(target=prefetch, args=(holding, tids), name="prefetch", daemon=True).start()
        holding.wait()
        # One line: the recorded line is where it waits for B (never acquired)
        start_recorder(tid, "deadlock", python_stack(1), prefetch_tid=tids[0]); LOCK_B.acquire()  # noqa: E702


def main():
    set_os_thread_name("rank%d" % RANK)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % PORT, rank=RANK, world_size=WORLD_SIZE)
    dist.all_reduce(torch.ones(4))   # the job ran one step together
    tid, step = gettid(), torch.ones(4)

    if RANK != ODD_RANK:
        start_recorder(tid, "all_reduce", python_stack(1)); dist.all_reduce(step)  # noqa: E702
    elif MODE == "collective":
        start_recorder(tid, "barrier", python_stack(1)); dist.barrier()  # noqa: E702
    else:
        deadlock(tid)
    time.sleep(3600)


if __name__ == "__main__":
    main()

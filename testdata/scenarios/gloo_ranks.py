"""Scenario (issue 28 item 5, PyTorch from Debian, CPU only): a distributed
job of three gloo ranks started by torch.multiprocessing.spawn, which
diverged: rank 0 waits in dist.barrier() while ranks 1 and 2 wait in
dist.all_reduce().  No rank can go on: each waits for the others, over TCP.
The launcher's main thread waits in spawn's join, and multiprocessing's
resource tracker (a child of the launcher) idles reading its pipe.

Truth, recorded from inside each rank: its PID, the TID of its main thread,
its rank, the world size, the collective it waits in, the Python stack of
the call; the launcher's PID and main thread.  usage: gloo_ranks.py
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

# torch 2.x's TCPStore asks for libuv, which Debian's build lacks (torch 1.13 has no such option)
os.environ.setdefault("USE_LIBUV", "0")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

WORLD_SIZE = 3
ODD_RANK = 0   # waits in barrier; the others in all_reduce


def record_path(rank):
    return os.environ["PYHANG_TRUTH"] + ".rank%d" % rank


def report_when_blocked(rank, world_size, tid, collective, stack):
    if fork_common.wait_blocked(os.getpid(), tid, timeout=60) is None:
        sys.exit("rank %d did not block in %s" % (rank, collective))
    fork_common.record(record_path(rank), pid=os.getpid(), tid=tid, rank=rank, world_size=world_size,
                       collective=collective, stack=stack)


def run(rank, world_size, port):
    set_os_thread_name("rank%d" % rank)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world_size)
    dist.all_reduce(torch.ones(4))   # the job ran one step together
    tid, step = gettid(), torch.ones(4)

    def start_reporter(collective, stack):
        threading.Thread(target=report_when_blocked, args=(rank, world_size, tid, collective, stack),
                         daemon=True).start()
    # One line each: the recorded line is where the collective is called.
    if rank == ODD_RANK:
        start_reporter("barrier", python_stack(1)); dist.barrier()  # noqa: E702
    else:
        start_reporter("all_reduce", python_stack(1)); dist.all_reduce(step)  # noqa: E702


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def report_when_ranks_block(truth):
    ranks = fork_common.wait_records([record_path(r) for r in range(WORLD_SIZE)], timeout=90)
    truth.write_and_signal_ready(ranks=ranks, world_size=WORLD_SIZE, odd_rank=ODD_RANK,
                                 torch=torch.__version__)


def main():
    set_os_thread_name("launcher")
    truth = Truth()
    truth.thread(tid=gettid(), name="launcher", role="main")
    threading.Thread(target=report_when_ranks_block, args=(truth,), daemon=True).start()
    mp.spawn(run, args=(WORLD_SIZE, free_port()), nprocs=WORLD_SIZE, join=True)
    time.sleep(3600)


if __name__ == "__main__":
    main()

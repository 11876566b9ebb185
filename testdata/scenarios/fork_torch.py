"""Scenario (case 2 with PyTorch from Debian): the parent runs tensor ops
with 2 intra-op threads (libgomp's pool starts), forks with os.fork, and the
child runs the same ops.  Truth: the child's PID and whether it finished
within 5 s (it hangs with Debian's torch 1.13.1 and libgomp 12: measured,
not assumed).  The matmul alone goes to the reference BLAS, which is
single-threaded; the large elementwise op is what runs under OpenMP.
usage: fork_torch.py [THREADS]"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

import torch  # noqa: E402

TRUTH = Truth()
DONE = os.environ["PYHANG_TRUTH"] + ".child-done"


def ops(a, m):
    return float((a * 2).sum()) + float((m @ m).sum())


def main():
    set_os_thread_name("torch-parent")
    torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
    a, m = torch.randn(4_000_000), torch.randn(256, 256)
    ops(a, m)
    parent_tasks = len(os.listdir("/proc/self/task"))
    pid = os.fork()
    if pid == 0:
        ops(a, m)
        fork_common.record(DONE, finished=True)
        while True:
            time.sleep(3600)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not os.path.exists(DONE):
        time.sleep(0.05)
    finished = os.path.exists(DONE)
    if not finished:
        fork_common.wait_blocked(pid)
    TRUTH.thread(tid=gettid(), name="torch-parent", role="main")
    TRUTH.write_and_signal_ready(child=pid, child_finished=finished, parent_tasks=parent_tasks,
                                 torch=torch.__version__, torch_threads=torch.get_num_threads())
    while True:
        time.sleep(3600)


main()

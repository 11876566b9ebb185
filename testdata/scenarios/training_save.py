"""Scenario (case 3 with PyTorch from Debian): a training job that stopped
while saving a checkpoint.  The job has run tensor ops with 2 intra-op
threads (libgomp's pool: threads that run no Python), a metrics thread waits
in threading.Condition.wait for the next step, and the main thread writes
the checkpoint with torch.save into a pipe to an "uploader" child that has
stopped reading: the pipe fills, and the main thread sleeps in write(2)
inside torch.save's zip writer.

Truth: the main thread's frames from save_checkpoint outwards (torch's own
frames are inside them), the metrics thread's stack, the uploader's PID, the
number of threads that run no Python.  usage: training_save.py
"""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

import torch  # noqa: E402

TRUTH = Truth()
STEP = threading.Condition()
SYS_write = 1


def metrics():
    set_os_thread_name("metrics")
    with STEP:
        # One line: the recorded line is the line the thread waits on.
        TRUTH.thread(tid=gettid(), name="metrics", role="metrics", stack=python_stack(1)); STEP.wait()  # noqa: E702


def save_checkpoint(model, out):
    # One line: the recorded line is where torch.save is called.
    TRUTH.data["main_outer"] = python_stack(1); torch.save(model, out)  # noqa: E702


def report_when_blocked(main_tid, uploader):
    while len(TRUTH.data["threads"]) < 1 or "main_outer" not in TRUTH.data:
        time.sleep(0.01)
    if fork_common.wait_blocked(os.getpid(), main_tid, nr=SYS_write) is None:
        sys.exit("the main thread did not block in write(2)")
    python_tids = {t["tid"] for t in TRUTH.data["threads"]} | {main_tid, gettid()}
    others = [int(t) for t in os.listdir("/proc/self/task") if int(t) not in python_tids]
    TRUTH.thread(tid=main_tid, name="train-main", role="main")
    TRUTH.write_and_signal_ready(uploader=uploader.pid, native_only_threads=sorted(others),
                                 torch=torch.__version__)


def main():
    set_os_thread_name("train-main")
    torch.set_num_threads(2)
    model = {"weights": torch.randn(4_000_000)}
    float((model["weights"] * 2).sum())  # starts libgomp's pool
    threading.Thread(target=metrics, name="metrics", daemon=True).start()
    r, w = os.pipe()
    # the uploader holds the read end and never reads: as a stalled upload would
    uploader = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], stdin=r)
    os.close(r)
    threading.Thread(target=report_when_blocked, args=(gettid(), uploader), daemon=True).start()
    with os.fdopen(w, "wb") as out:
        save_checkpoint(model, out)


main()

"""Scenario: CUDA initialised before fork, with a FIXTURE in place of the
driver (no GPU here): libcudafixture.so is copied to ./libcuda.so.1 and
loaded; its cuInit starts a helper thread, as the real driver does.  Then
os.fork; the child parks.  usage: fork_cuda.py LIBCUDAFIXTURE"""
import ctypes
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid  # noqa: E402
import fork_common  # noqa: E402

TRUTH = Truth()
CHILD = os.environ["PYHANG_TRUTH"] + ".child"


def main():
    driver = os.path.join(os.getcwd(), "libcuda.so.1")
    shutil.copy(sys.argv[1], driver)
    lib = ctypes.CDLL(driver)
    if lib.cuInit(0) != 0:
        sys.exit("fixture cuInit failed")
    pid = os.fork()
    if pid == 0:
        fork_common.record(CHILD, pid=os.getpid(), tid=gettid())
        while True:
            time.sleep(3600)
    info = fork_common.wait_records([CHILD])[0]
    fork_common.wait_blocked(pid, nr=230) or fork_common.wait_blocked(pid, nr=7)  # clock_nanosleep / poll
    TRUTH.thread(tid=gettid(), role="main")
    TRUTH.write_and_signal_ready(child=info, driver=driver)
    while True:
        time.sleep(3600)


main()

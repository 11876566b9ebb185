"""Scenario (case 1): a parent thread holds a C mutex (libforkfixture.so)
when the main thread forks; the child locks the same mutex and blocks
forever: its copy is locked by a thread that does not exist in the child.
usage: fork_mutex.py LIBFORKFIXTURE"""
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

TRUTH = Truth()
set_os_thread_name("fork-parent")
lib = ctypes.CDLL(sys.argv[1])
lib.forkfix_mutex_address.restype = ctypes.c_size_t
holder = lib.forkfix_hold_mutex()
mutex = lib.forkfix_mutex_address()
record_path = os.environ["PYHANG_TRUTH"] + ".child"


def child():
    fork_common.record(record_path, pid=os.getpid(), tid=gettid(), stack=python_stack(1))
    lib.forkfix_lock_mutex()  # never returns
    os._exit(0)


def main():
    pid = os.fork()
    if pid == 0:
        child()
    info = fork_common.wait_records([record_path])[0]
    futex = fork_common.wait_blocked(pid)
    TRUTH.thread(tid=gettid(), name="fork-parent", role="main")
    TRUTH.thread(tid=holder, role="holds-mutex")
    TRUTH.write_and_signal_ready(child=info, mutex=mutex, holder=holder, child_futex=futex)
    while True:
        time.sleep(3600)


main()

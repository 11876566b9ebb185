"""Scenario: a thread held in vfork (libforkfixture.so's forkfix_vfork_wait):
it waits, as the kernel makes a vfork parent wait, until its child exits an
hour later; no ptrace stop reaches it meanwhile, so a stop of the process
goes on without it.  The main thread sleeps.  usage: vfork_wait.py LIBFORKFIXTURE"""
import ctypes
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
lib = ctypes.CDLL(sys.argv[1])
started = threading.Event()


def in_vfork():
    set_os_thread_name("in-vfork")
    TRUTH.thread(tid=gettid(), name="in-vfork", role="in-vfork", parked_in="vfork")
    started.set()
    lib.forkfix_vfork_wait(3600)   # ctypes lets go of the GIL for the call


def main():
    set_os_thread_name("vfork-main")
    threading.Thread(target=in_vfork, daemon=True).start()
    started.wait()
    while not lib.forkfix_vfork_child():   # the child runs: the thread is inside vfork's wait
        time.sleep(0.01)
    TRUTH.thread(tid=gettid(), name="vfork-main", role="main")
    TRUTH.write_and_signal_ready(child=lib.forkfix_vfork_child())
    while True:
        time.sleep(3600)


main()

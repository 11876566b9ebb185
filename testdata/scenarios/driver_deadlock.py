"""Scenario: case 5 of CASES.md, reproduced with a fixture "driver" library
(libdriverfixture.so, no GPU).

A worker thread calls into the driver (ctypes.CDLL: the GIL is released);
the driver takes its rwlock (for write, or for read with `r`) and, once the
main thread says go, calls a Python callback, which must take the GIL.  The
main thread, holding the GIL, calls the driver through ctypes.PyDLL (the GIL
stays held): it says go and blocks on the driver's rwlock.  Main holds the GIL and waits for the
rwlock; the worker holds the rwlock and waits for the GIL.
usage: driver_deadlock.py LIBDRIVERFIXTURE [w|r]
"""
import ctypes
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[2] if len(sys.argv) > 2 else "w"
driver = ctypes.CDLL(sys.argv[1])           # calls release the GIL
driver_keeping_gil = ctypes.PyDLL(sys.argv[1])  # calls keep the GIL
driver.drv_lock_address.restype = ctypes.c_void_p
CALLBACK = ctypes.CFUNCTYPE(None)


def on_driver_event():
    pass  # never runs: taking the GIL to run it is where the worker hangs


callback = CALLBACK(on_driver_event)


def worker():
    set_os_thread_name("driver-worker")
    # parked_in: the harness waits for the GIL wait itself, not the driver's sleep before the callback
    TRUTH.thread(tid=gettid(), name="driver-worker", role="holds-driver-lock", stack=python_stack(1),
                 parked_in="futex")
    driver.drv_call_with_callback(callback, ord(MODE))


def main():
    set_os_thread_name("driver-main")
    TRUTH.thread(tid=gettid(), name="driver-main", role="holds-gil", parked_in="futex")
    threading.Thread(target=worker, daemon=True).start()
    driver.drv_wait_until_locked()       # GIL released while waiting
    TRUTH.write_and_signal_ready(lock=driver.drv_lock_address(), mode=MODE)
    driver_keeping_gil.drv_go_and_lock()  # lets the callback go, then blocks on the rwlock, GIL held


main()

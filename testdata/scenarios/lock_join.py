"""Scenario: joins that never return.

  with   the main thread holds a threading.Lock (`with config_lock:`) and
         joins a worker that waits for that Lock: the most common Python
         deadlock.  Roles: "holds-lock-joins", "waits-for-lock".
  exit   a non-daemon worker waits on an Event nobody sets and the main
         thread returns: the interpreter, exiting, joins the worker
         forever (threading._shutdown).  Roles: "exits", "never-ends".

The truth also records the lock's id() (lock_id) and the worker's
threading name (worker_name).  Works on every Python from 3.6 on.
usage: lock_join.py with|exit
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[1] if len(sys.argv) > 1 else "with"
config_lock = threading.Lock()
never = threading.Event()
started = threading.Event()


def load_config():
    set_os_thread_name("config-loader")
    TRUTH.thread(tid=gettid(), name="config-loader", role="waits-for-lock")
    started.set()
    with config_lock:
        pass


def wait_forever():
    set_os_thread_name("never-ends")
    TRUTH.thread(tid=gettid(), name="never-ends", role="never-ends")
    started.set()
    never.wait()


def main():
    if MODE == "with":
        set_os_thread_name("holds-and-joins")
        TRUTH.thread(tid=gettid(), name="holds-and-joins", role="holds-lock-joins")
        with config_lock:
            worker = threading.Thread(target=load_config, name="config-loader-py")
            worker.start()
            started.wait()
            time.sleep(0.2)
            TRUTH.write_and_signal_ready(lock_id=id(config_lock), worker_name=worker.name)
            worker.join()
    else:
        set_os_thread_name("exits")
        TRUTH.thread(tid=gettid(), name="exits", role="exits")
        worker = threading.Thread(target=wait_forever, name="never-ends-py")
        worker.start()
        started.wait()
        TRUTH.write_and_signal_ready(worker_name=worker.name)
        # returning: the interpreter joins the non-daemon worker at exit


main()

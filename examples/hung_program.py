"""A small program that hangs: the main thread holds a lock and waits for a
worker, which waits for that lock.  Run it, then ask pyhang why it is stuck.
(The demo records the program's thread IDs the way the test scenarios do.)
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "scenarios"))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
config_lock = threading.Lock()


def load_config():
    set_os_thread_name("config-loader")
    TRUTH.thread(tid=gettid(), name="config-loader", role="waits for config_lock")
    with config_lock:          # blocks: main holds config_lock
        pass


def main():
    set_os_thread_name("hung-main")
    TRUTH.thread(tid=gettid(), name="hung-main", role="holds config_lock, joins the loader")
    with config_lock:
        loader = threading.Thread(target=load_config)
        loader.start()
        time.sleep(0.2)
        if os.environ.get("PYHANG_TRUTH"):
            TRUTH.write_and_signal_ready()
        loader.join()          # never returns


main()

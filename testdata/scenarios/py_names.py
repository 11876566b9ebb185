"""Scenario: threads waiting for threading.Locks that no global of __main__
refers to, each held by another thread (inside `with lock:`, waiting on an
Event nobody sets):

  cache-holder / cache-waiter          the `_lock` of CACHE, a Cache; both
                                       threads run Cache methods (`self`)
  module-holder / module-waiter        py_names_module.LOCK, a global of
                                       another module
  registry-holder / registry-waiter    py_names_module.REGISTRY._lock: an
                                       attribute of an instance that
                                       module's global refers to; no frame
                                       refers to the instance

Records each thread's tid and role, and the id() of each lock and of the
instances holding them.  Works on every Python from 3.6 on.
usage: py_names.py
"""
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402
import py_names_module  # noqa: E402

TRUTH = Truth()
NEVER = threading.Event()
SYS_FUTEX = 202


class Cache:
    def __init__(self):
        self._lock = threading.Lock()

    def hold(self, event):
        with self._lock:
            event.wait()

    def get(self):
        with self._lock:
            pass


CACHE = Cache()


def start(role, call):
    fork_common.start_blocked(TRUTH, role, call, SYS_FUTEX)


def ids():
    """The id()s the test compares with (read here: main's own frame keeps no reference to the locks)."""
    return {"cache": id(CACHE), "cache_lock": id(CACHE._lock), "module_lock": id(py_names_module.LOCK),
            "registry_lock": id(py_names_module.REGISTRY._lock)}


def main():
    set_os_thread_name("names-main")
    TRUTH.thread(tid=gettid(), name="names-main", role="main")
    start("cache-holder", lambda: CACHE.hold(NEVER))
    start("cache-waiter", CACHE.get)
    start("module-holder", lambda: py_names_module.hold_lock(NEVER))
    start("module-waiter", py_names_module.use_lock)
    start("registry-holder", lambda: py_names_module.hold_registry(NEVER))
    start("registry-waiter", py_names_module.register)
    TRUTH.write_and_signal_ready(**ids())
    while True:
        time.sleep(3600)


main()

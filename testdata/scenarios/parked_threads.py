"""Scenario: a main thread and N named worker threads, all parked in
time.sleep at a known depth of Python recursion.

Each thread sets its OS thread name (what gdb shows for a live process),
records its TID and its Python stack exactly where it sleeps, then sleeps
forever.  usage: parked_threads.py [N] [DEPTH]
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402

TRUTH = Truth()
N = int(sys.argv[1]) if len(sys.argv) > 1 else 3
DEPTH = int(sys.argv[2]) if len(sys.argv) > 2 else 5


def park_forever(name, role):
    def record(stack):
        TRUTH.thread(tid=gettid(), name=name, role=role, stack=stack)
        if len(TRUTH.data["threads"]) == N + 1:  # the last one to park tells
            TRUTH.write_and_signal_ready()
    # One line: the recorded line is the line the thread sleeps on.
    while True: record(python_stack(1)); time.sleep(3600)  # noqa: E701,E702


def descend(levels, name, role):
    if levels > 0:
        return descend(levels - 1, name, role)
    park_forever(name, role)


def worker(index):
    name = "worker-%d" % index
    set_os_thread_name(name)
    descend(DEPTH + index, name, "worker")


def main():
    set_os_thread_name("parked-main")
    for i in range(N):
        threading.Thread(target=worker, args=(i,), daemon=True).start()
    descend(2, "parked-main", "main")


main()

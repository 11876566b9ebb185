"""Scenario: threads deep in recursion, parked in time.sleep.

  main     descend(N): one function calling itself N times (N = 5000 by default)
  mutual   ping/pong calling each other M times (M = 300 pairs), in a thread

Truth: each thread's role and TID, the recursion's depth and functions, and
the frames below it (where the recursion was entered from).
usage: deep_recursion.py [N] [M]"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
N = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
M = int(sys.argv[2]) if len(sys.argv) > 2 else 300
sys.setrecursionlimit(N + M + 1000)
parked = threading.Barrier(2)


def park(role, **facts):
    TRUTH.thread(tid=gettid(), name="deep-" + role, role=role, **facts)
    if parked.wait() == 0:
        TRUTH.write_and_signal_ready(depth=N, pairs=M)
    while True:
        time.sleep(3600)


def descend(n):
    if n == 0:
        park("main", function="descend", repeats=N)
    return descend(n - 1)


def ping(n):
    return pong(n)


def pong(n):
    if n == 0:
        park("mutual", functions=["ping", "pong"], repeats=M)
    return ping(n - 1)


def mutual():
    set_os_thread_name("deep-mutual")
    ping(M)


threading.Thread(target=mutual, daemon=True).start()
set_os_thread_name("deep-main")
descend(N)

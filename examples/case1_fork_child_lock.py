"""Case 1 of CASES.md as a runnable story: the forked worker that never
starts.

A model server has helper threads; one of them holds a lock when the
server forks a worker with multiprocessing's default start method (fork).
The worker's task takes the same lock and waits forever: its copy of the
lock was locked by a thread that fork did not copy.

  examples/demo.sh                      # builds everything once
  python3 examples/case1_fork_child_lock.py        # a threading.Lock and a fork Pool
  python3 examples/case1_fork_child_lock.py mutex  # a C mutex held by a parent thread

`pyhang report --tree` on the server examines it and its workers: each
worker is a fork child that did not exec (and how pyhang knows), the lock's
owner is not one of its threads but a thread of its parent, named, and what
to do instead.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

PY = "/usr/bin/python3.11"
if len(sys.argv) > 1 and sys.argv[1] == "mutex":
    argv = [PY, "-u", os.path.join(harness.SCENARIOS, "fork_mutex.py"), harness.fixture_path("libforkfixture.so")]
else:
    argv = [PY, "-u", os.path.join(harness.SCENARIOS, "fork_pool_lock.py")]
with harness.Scenario(argv) as s:
    harness.print_tree_report(s.pid, "the server and its workers")

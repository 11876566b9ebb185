"""Case 4 of CASES.md as a runnable story: copy-on-write of refcounts.

The parent builds a large list of small Python objects; two fork workers
only read it, yet every read writes a refcount and copies the page it is
on, worker by worker.  pyhang, on a live worker, sets its private dirty
memory against what it still shares with the parent and names the large
containers it is copying.

  examples/demo.sh                          # builds everything once
  python3 examples/case4_cow_refcounts.py
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

argv = ["/usr/bin/python3.11", "-u", os.path.join(harness.SCENARIOS, "fork_cow.py")]
with harness.Scenario(argv, ready_timeout=120) as s:
    pid = s.truth["workers"][0]["pid"]
    print("$ gdb -batch -p %d -ex 'source gdbext/pyhang.gdb' -ex 'fork-hazards'   # one of the workers" % pid)
    text, _ = harness.run_gdb_marked("fork-hazards", pid=pid)
    print(text, end="")

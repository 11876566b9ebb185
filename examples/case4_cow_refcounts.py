"""Case 4 of CASES.md as a runnable story: copy-on-write of refcounts.

A DataLoader-style parent builds a large list of small Python objects; its
two fork workers only read it, yet every read writes a refcount and copies
the page it is on, worker by worker; then they block on a shard nobody
writes.  `pyhang report --tree` on the parent sums up, at the parent, the
private dirty memory of its workers (each set against what it still shares)
and names the large containers they copy.

  examples/demo.sh                          # builds everything once
  python3 examples/case4_cow_refcounts.py
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

argv = ["/usr/bin/python3.11", "-u", os.path.join(harness.SCENARIOS, "fork_dataloader.py")]
with harness.Scenario(argv, ready_timeout=120) as s:
    harness.wait_processes_parked([w["pid"] for w in s.truth["workers"]])
    harness.print_tree_report(s.pid, "the loader and its workers")

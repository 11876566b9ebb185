"""Case 2 of CASES.md as a runnable story: OpenMP before fork.

The parent runs an OpenMP parallel region (libgomp starts its thread pool),
forks, and the child runs one again: it waits for pool threads that fork
did not copy.  `torch` runs PyTorch from Debian (python3-torch) with 2
intra-op threads instead of the C program (build/testdata/prog_omp).
`pyhang report --tree` on the parent examines it and the child: the child's
thread blocked in libgomp waits for pool threads that live only in the
parent, named there.

  examples/demo.sh                                # builds everything once
  python3 examples/case2_openmp_before_fork.py    # C program built with -fopenmp
  python3 examples/case2_openmp_before_fork.py torch
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

if len(sys.argv) > 1 and sys.argv[1] == "torch":
    argv = ["/usr/bin/python3.11", "-u", os.path.join(harness.SCENARIOS, "fork_torch.py"), "2"]
    finished = lambda t: t["child_finished"]  # noqa: E731
else:
    argv = [harness.fixture_path("prog_omp")]
    finished = lambda t: t["records"][0]["child_finished"]  # noqa: E731
with harness.Scenario(argv, ready_timeout=120) as s:
    print("(the child %s its parallel region within the scenario's wait)" %
          ("finished" if finished(s.truth) else "did NOT finish"))
    harness.print_tree_report(s.pid, "the parent and its fork child")

"""Case 5 of CASES.md as a runnable story: a Python callback inside a native
driver lock.

A "driver" library (build/testdata/libdriverfixture.so, a fixture that
reproduces the CUDA driver's locking pattern without a GPU) takes its
rwlock and calls back into Python; the callback needs the GIL.  The main
thread holds the GIL and calls the driver, which blocks on that rwlock.
Nobody moves again.  pyhang names the cycle.

  examples/demo.sh                 # builds everything once
  python3 examples/case5_driver_callback.py [w|r]

With `r` the driver holds its lock for reading: glibc records no readers,
so the holder is found by a heuristic and the deadlock is "likely".
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "w"
scenario = ["/usr/bin/python3.11", "-u",
            os.path.join(harness.SCENARIOS, "driver_deadlock.py"), harness.fixture_path("libdriverfixture.so"), mode]
with harness.Scenario(scenario) as s:
    print("$ gdb -batch -p %d -ex 'source gdbext/pyhang.gdb' -ex 'pyhang report'" % s.pid)
    text, _ = harness.run_gdb_marked("pyhang report", pid=s.pid)
    print(text, end="")

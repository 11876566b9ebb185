"""Case 3 of CASES.md as a runnable story: a training job that stopped with
no error, at 0% utilisation.

The job (PyTorch from Debian, python3-torch) has run tensor ops, so libgomp
and torch keep pool threads that run no Python; a metrics thread waits in
threading.Condition.wait; the main thread is inside torch.save, writing the
checkpoint into a pipe to an uploader that stopped reading.  Without debug
symbols, `pyhang report --tree` gives every thread that runs Python its
stack, says what each waits for, names the process at the other end of the
pipe and what it does.

  examples/demo.sh                           # builds everything once
  python3 examples/case3_training_save.py    # needs python3-torch
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

argv = ["/usr/bin/python3.11", "-u", os.path.join(harness.SCENARIOS, "training_save.py")]
with harness.Scenario(argv, ready_timeout=120) as s:
    harness.print_tree_report(s.pid, "the training job and its uploader")

"""Start examples/hung_program.py, attach gdb in batch mode, print pyhang's
report, and stop the program.  Run through examples/demo.sh, which builds
pyhang first."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

PYTHON = "/usr/bin/python3"


def main():
    program = os.path.join(ROOT, "examples", "hung_program.py")
    with harness.Scenario([PYTHON, "-u", program]) as s:
        command = "gdb -batch -p %d -ex 'source %s' -ex 'pyhang report'" % (s.pid, harness.GDBEXT)
        print("$ " + command.replace(ROOT + "/", ""), flush=True)
        text, _ = harness.run_gdb_marked("pyhang report", pid=s.pid)
        print(text, end="")
    print("(stopped the hung program, pid %d)" % s.pid)
    print("How to read it: README.md, \"The demo, and how to read a report\"; every command: docs/commands/")


main()

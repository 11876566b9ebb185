"""The classic subprocess deadlock: the parent reads the child's stdout to
its end while the child fills its stderr pipe, which nobody reads.  The
child writes 200000 bytes to stderr in one write (PYTHONUNBUFFERED=1, as in
most container images); the pipe takes 65536 and the write blocks.

A stop of the child (ptrace attach) interrupts that write: the kernel
returns the 65536 already moved, Python drops the rest, the child exits and
the hang is gone with the data.  usage: pipe_stderr.py"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

SIZE = 200000
CHILD = "import sys; sys.stderr.write('x' * %d); print('done')" % SIZE

if __name__ == "__main__":
    TRUTH = Truth()
    set_os_thread_name("parent")
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(os.environ, PYTHONUNBUFFERED="1"))
    TRUTH.thread(tid=gettid(), role="reads-child-stdout")
    TRUTH.write_and_signal_ready(child=child.pid, size=SIZE, stdout_fd=child.stdout.fileno(),
                                 stderr_fd=child.stderr.fileno())
    out = child.stdout.read()   # blocks: the child never gets to print
    sys.exit(0)

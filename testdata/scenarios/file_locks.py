"""Scenario: file locks across processes.

usage: file_locks.py cycle|range
  cycle  the parent holds flock(LOCK_EX) on file A and waits for B; its
         child holds B and waits for A: a deadlock across two processes
         (flock has no deadlock detection; fcntl's would refuse it)
  range  the child write-locks bytes 100-149 of file A (fcntl F_SETLK) and
         waits reading a pipe; the parent waits to write-lock bytes 120-129
         (fcntl.lockf, F_SETLKW)

Truth: the parent's and child's pid and tid, the files (path, inode).
Works on every Python from 3.6 on."""
import fcntl
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[1] if len(sys.argv) > 1 else "cycle"
DIR = tempfile.mkdtemp(prefix="pyhang-locks-")
A, B = os.path.join(DIR, "a.lock"), os.path.join(DIR, "b.lock")
for path in (A, B):
    with open(path, "wb") as f:
        f.write(b"\0" * 256)
RECORD = os.environ["PYHANG_TRUTH"] + ".child"
SYS_FLOCK, SYS_FCNTL, SYS_READ = 73, 72, 0


def child(held, wanted):
    set_os_thread_name("locks-child")
    fd = os.open(held, os.O_RDWR)
    if MODE == "cycle":
        fcntl.flock(fd, fcntl.LOCK_EX)
    else:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 50, 100)
    fork_common.record(RECORD, pid=os.getpid(), tid=gettid())
    if MODE == "cycle":
        while not os.path.exists(RECORD + ".parent-holds"):
            time.sleep(0.01)
        fcntl.flock(os.open(wanted, os.O_RDWR), fcntl.LOCK_EX)   # never returns
    else:
        r, _ = os.pipe()
        os.read(r, 1)   # holds the range for ever
    os._exit(0)


def main():
    set_os_thread_name("locks-parent")
    pid = os.fork()
    if pid == 0:
        child(B if MODE == "cycle" else A, A)
    info = fork_common.wait_records([RECORD])[0]
    fd = os.open(A, os.O_RDWR)
    TRUTH.thread(tid=gettid(), name="locks-parent", role="parent")
    inode = {p: os.stat(p).st_ino for p in (A, B)}
    if MODE == "cycle":
        fcntl.flock(fd, fcntl.LOCK_EX)
        open(RECORD + ".parent-holds", "w").close()
        if fork_common.wait_blocked(pid, nr=SYS_FLOCK) is None:
            raise SystemExit("file_locks: the child did not block")
        TRUTH.write_and_signal_ready(mode=MODE, child=info, a=A, b=B, inodes=inode)
        fcntl.flock(os.open(B, os.O_RDWR), fcntl.LOCK_EX)   # never returns
    else:
        if fork_common.wait_blocked(pid, nr=SYS_READ) is None:
            raise SystemExit("file_locks: the child did not park")
        TRUTH.write_and_signal_ready(mode=MODE, child=info, a=A, b=B, inodes=inode, start=120, length=10)
        fcntl.lockf(fd, fcntl.LOCK_EX, 10, 120)   # waits for the child's range


main()

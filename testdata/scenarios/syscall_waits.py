"""Scenario: threads parked in blocking system calls other than futex, and
a child process in a cross-process deadlock with its parent.

Before any thread starts, the parent forks a child that takes an exclusive
flock on a file and then reads a pipe ("the job pipe") whose write end only
the parent holds (the child closed its copy).  The parent never writes to it
and waits for the child in os.waitpid: a deadlock across two processes.
Meanwhile the parent's threads park in:

  reader   os.read on another pipe nobody writes to         (read)
  poller   select.poll on that pipe's read end and a socket (poll)
  receiver socket.recv on one end of a unix socketpair      (recvfrom)
  sleeper  time.sleep(3600)   (clock_nanosleep; before 3.11 select(), which
                              glibc makes with the pselect6 system call)
  locker   fcntl.flock on the file the child holds          (flock)
  pauser   signal.pause                                     (pause)
  main     os.waitpid(child)                                (wait4)

Each records its TID, role, the system call, its fd and the fd's
/proc link (pipe:[N], socket:[N]); the truth also has the child's PID, the
job pipe's fds and link, and the lock file.  Works on every Python from 3.6 on.
"""
import fcntl
import os
import select
import signal
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
SLEEP_CALL = "clock_nanosleep" if sys.version_info >= (3, 11) else "pselect6"


def link(fd):
    return os.readlink("/proc/self/fd/%d" % fd)


def record(role, syscall, fd=None, **extra):
    set_os_thread_name(role)
    TRUTH.thread(tid=gettid(), name=role, role=role, syscall=syscall, fd=fd,
                 link=link(fd) if fd is not None else None, **extra)


def main():
    set_os_thread_name("syscall-main")
    job_r, job_w = os.pipe()
    ready_r, ready_w = os.pipe()
    lock_path = os.path.join(tempfile.mkdtemp(prefix="pyhang-flock-"), "lock")
    lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    child = os.fork()
    if child == 0:
        os.close(job_w)
        os.close(ready_r)
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        os.write(ready_w, b"x")
        os.read(job_r, 1)      # the parent holds the only write end and never writes
        os._exit(0)
    os.close(job_r)
    os.close(ready_w)
    os.read(ready_r, 1)        # the child holds the flock now

    idle_r, idle_w = os.pipe()
    left, right = socket.socketpair()
    parked = []

    def start(fn):
        t = threading.Thread(target=fn, daemon=True)
        t.start()
        parked.append(t)

    def reader():
        record("reader", "read", idle_r)
        os.read(idle_r, 1)

    def poller():
        record("poller", "poll", None, fds=[idle_r, left.fileno()])
        p = select.poll()
        p.register(idle_r, select.POLLIN)
        p.register(left.fileno(), select.POLLIN)
        p.poll()

    def receiver():
        record("receiver", "recvfrom", left.fileno(), peer_link=link(right.fileno()))
        left.recv(1)

    def sleeper():
        record("sleeper", SLEEP_CALL)
        time.sleep(3600)

    def locker():
        fd = os.open(lock_path, os.O_RDWR)
        record("locker", "flock", fd, holder=child)
        fcntl.flock(fd, fcntl.LOCK_EX)

    def pauser():
        record("pauser", "pause")
        signal.pause()

    for fn in (reader, poller, receiver, sleeper, locker, pauser):
        start(fn)
    while len(TRUTH.data["threads"]) < len(parked):
        time.sleep(0.01)
    record("main", "wait4", None, child=child)
    TRUTH.write_and_signal_ready(child=child, job_fd=job_w, job_link=link(job_w), lock_path=lock_path,
                                 idle_link=link(idle_r), sleep_seconds=3600)
    os.waitpid(child, 0)


main()

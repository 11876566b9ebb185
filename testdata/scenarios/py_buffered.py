"""Scenario: threads blocked on the internal lock of a buffered I/O object
(io.BufferedWriter), which records the thread holding it.

  threads  stdout-holder writes 1 MiB to sys.stdout (fd 1 is a pipe nobody
           reads) and sleeps in write(2) holding the lock of
           sys.stdout.buffer; stdout-printer calls print(..., flush=True)
           and waits for that lock (no Python frame references sys.stdout);
           log-holder and log-writer do the same on LOG, a text file over
           another such pipe, which the writer's frame references
           (print(file=out)).
  fork     log-holder holds LOG's lock as above when the main thread forks;
           the child prints to LOG and blocks for ever: its copy of the
           lock is held by a thread that does not exist in the child
           (child: its pid and tid).

Records each thread's tid and role, the id() of each BufferedWriter and the
fd LOG writes to.  Unbuffered stdio (-u, PYTHONUNBUFFERED) has no
BufferedWriter under sys.stdout: the scenario then runs itself again without
it.  Works on every Python from 3.6 on.
usage: py_buffered.py threads|fork
"""
import io
import os
import sys
import time

if not isinstance(getattr(sys.stdout, "buffer", None), io.BufferedWriter):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

TRUTH = Truth()
SYS_WRITE, SYS_FUTEX = 1, 202
BIG = b"x" * (1 << 20)   # far more than a pipe holds: write(2) sleeps

_unread = []             # read ends kept open, never read: writers block instead of failing


def full_pipe():
    r, w = os.pipe()
    _unread.append(r)
    return w


LOG_FD = full_pipe()
LOG = open(LOG_FD, "w")


def write_line(out):
    print("a line nobody reads", file=out, flush=True)


def start(role, call, nr):
    return fork_common.start_blocked(TRUTH, role, call, nr)


def threads():
    ready_out = os.dup(1)
    os.dup2(full_pipe(), 1)   # sys.stdout now writes into a pipe nobody reads
    start("stdout-holder", lambda: sys.stdout.buffer.write(BIG), SYS_WRITE)
    start("stdout-printer", lambda: print("never printed", flush=True), SYS_FUTEX)
    start("log-holder", lambda: LOG.buffer.write(BIG), SYS_WRITE)
    start("log-writer", lambda: write_line(LOG), SYS_FUTEX)
    stdout = sys.stdout
    sys.stdout = open(ready_out, "w")   # READY goes to the harness, then stdout is the stuck one again
    TRUTH.write_and_signal_ready(stdout_buffer=id(stdout.buffer), log_buffer=id(LOG.buffer), log_fd=LOG_FD)
    sys.stdout = stdout


def fork():
    start("log-holder", lambda: LOG.buffer.write(BIG), SYS_WRITE)
    record_path = os.environ["PYHANG_TRUTH"] + ".child"
    pid = os.fork()
    if pid == 0:
        fork_common.record(record_path, pid=os.getpid(), tid=gettid())
        write_line(LOG)   # never returns
        os._exit(0)
    info = fork_common.wait_records([record_path])[0]
    if fork_common.wait_blocked(pid, nr=SYS_FUTEX) is None:
        raise SystemExit("py_buffered: the fork child did not block")
    TRUTH.write_and_signal_ready(child=info, log_buffer=id(LOG.buffer), log_fd=LOG_FD)


def main():
    set_os_thread_name("buffered-main")
    TRUTH.thread(tid=gettid(), name="buffered-main", role="main")
    {"threads": threads, "fork": fork}[sys.argv[1]]()
    while True:
        time.sleep(3600)


main()

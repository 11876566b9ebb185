"""Scenario: processes stuck on each other.

  pipe        the parent forks a child that reads a pipe whose write end only
              the parent holds, and waits for the child in os.waitpid: a
              deadlock across two processes.  Each has one thread.
  subprocess  the parent writes 1 MiB to a subprocess's stdin before reading
              its output; the child writes 1 MiB to its stdout before
              reading its input: both pipes full, each writer waits for the
              other to read.
  socketpair  parent and child each wait to receive first on their ends of a
              unix socketpair.
  pool        a multiprocessing Pool('fork') of 2 workers, each stuck in a task
              that reads a pipe only the parent can write to; the parent
              joins the pool: a deadlock of all three (through the pool's
              idle task thread, which only the parent's threads could feed).
  zombie      the parent has a child that exited and was not reaped, and a
              child that runs no Python (`sleep`); it reads a pipe.
  traced      the parent has a child already traced by another child (as
              when strace or another debugger is attached: a process has one
              tracer, so gdb cannot attach to it); all read a pipe.

The truth has the parent's PID, its children ("children": [{pid, role,
syscall}]), the parent's own call ("syscall") and which processes form a
deadlock ("deadlock": PIDs, empty when none).  Works on every Python from 3.6 on.
usage: process_tree.py pipe|subprocess|socketpair|pool|zombie|traced
"""
import ctypes
import multiprocessing
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[1] if len(sys.argv) > 1 else "pipe"
MIB = 1 << 20


def ready(**extra):
    TRUTH.thread(tid=gettid(), name="tree-parent", role="parent")
    TRUTH.write_and_signal_ready(mode=MODE, **extra)


def pipe():
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(w)
        os.read(r, 1)          # only the parent could write, and it waits for us
        os._exit(0)
    os.close(r)
    ready(syscall="wait4", children=[{"pid": child, "role": "reader", "syscall": "read"}], deadlock=[os.getpid(), child])
    os.waitpid(child, 0)


# Writes loop until all is written: a write that a debugger's attach
# interrupts after a part returns that part, and the rest is written again.
CHILD = "import os\ndata = b'x' * %d\nwhile data:\n    data = data[os.write(1, data):]\nos.read(0, 1)\n" % MIB


def subprocess_both_pipes_full():
    p = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    ready(syscall="write", children=[{"pid": p.pid, "role": "writer", "syscall": "write"}],
          deadlock=[os.getpid(), p.pid])
    p.stdin.write(b"y" * MIB)   # the child's stdin fills; it never reads before writing all
    p.stdin.flush()
    p.wait()


def socketpair():
    ours, theirs = socket.socketpair()
    child = os.fork()
    if child == 0:
        ours.close()
        theirs.recv(1)         # waits for the parent to speak first
        os._exit(0)
    theirs.close()
    ready(syscall="recvfrom", children=[{"pid": child, "role": "peer", "syscall": "recvfrom"}],
          deadlock=[os.getpid(), child])
    ours.recv(1)               # waits for the child to speak first


def stuck_task(fd, started):
    set_os_thread_name("pool-worker")
    os.write(started, b"s")
    os.read(fd, 1)


def pool():
    r, w = os.pipe()
    started_r, started_w = os.pipe()
    workers = multiprocessing.get_context("fork").Pool(2)
    pids = sorted(p.pid for p in workers._pool)
    results = [workers.apply_async(stuck_task, (r, started_w)) for _ in pids]
    for _ in pids:
        os.read(started_r, 1)   # each worker has its task
    # Every thread of the three processes waits on another of them: the workers on the parent (the only
    # process that could write their pipe), the parent's threads on the workers (their results, their
    # exit) or, idle, for work only another of the parent's threads could give.
    ready(syscall=None, children=[{"pid": pid, "role": "worker", "syscall": "read"} for pid in pids],
          deadlock=[os.getpid()] + pids, tasks=len(results))
    workers.close()
    workers.join()


def zombie():
    r, w = os.pipe()
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    sleeper = subprocess.Popen(["sleep", "3600"])
    while True:   # until the child is a zombie
        with open("/proc/%d/stat" % dead) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
    ready(syscall="read", children=[{"pid": dead, "role": "zombie", "syscall": None},
                                    {"pid": sleeper.pid, "role": "non-python", "syscall": "clock_nanosleep"}],
          deadlock=[])
    os.read(r, 1)


PTRACE_SEIZE = 0x4206  # <linux/ptrace.h>: attach without stopping the tracee


def traced():
    r, w = os.pipe()
    roles = {}
    for role in ("traced", "tracer"):
        pid = os.fork()
        if pid == 0:
            os.close(w)
            if role == "tracer":
                libc = ctypes.CDLL(None, use_errno=True)
                if libc.ptrace(PTRACE_SEIZE, roles["traced"], None, None) != 0:
                    os._exit(1)
            os.read(r, 1)
            os._exit(0)
        roles[role] = pid
    while True:  # until the tracer holds the traced child
        with open("/proc/%d/status" % roles["traced"]) as f:
            if "TracerPid:\t%d\n" % roles["tracer"] in f.read():
                break
    ready(syscall="read", children=[{"pid": pid, "role": role, "syscall": "read"} for role, pid in roles.items()],
          deadlock=[])
    os.read(r, 1)


set_os_thread_name("tree-parent")
{"pipe": pipe, "subprocess": subprocess_both_pipes_full, "socketpair": socketpair, "pool": pool,
 "zombie": zombie, "traced": traced}[MODE]()

"""Whether stopping a live process could change what it does: a thread
inside a write or send on a pipe or socket has moved part of its data when
a stop (ptrace's attach, gdb -p) interrupts it; the kernel then returns a
short count, and a program that does not write the rest (Python's
unbuffered streams, many C programs) loses it and goes on: the hang is gone
and so is the data.  The command line reads every thread's system-call
record first (/proc/PID/task/TID/syscall: reading it stops nothing) and
takes the no-stop path when one would be cut short."""
import os

from pyhang import procfs
from pyhang.analysis.syscall_names import NAMES

# Calls that move data to an fd and return a short count when a signal
# (a stop) interrupts them after partial progress, by the argument holding
# the fd they write to.
TRANSFERS = {"write": 0, "writev": 0, "pwritev": 0, "pwritev2": 0, "sendto": 0, "sendmsg": 0, "sendmmsg": 0,
             "sendfile": 0, "splice": 2, "vmsplice": 0, "tee": 1}

# fd kinds whose writes a stop cuts short (a file's write is not interrupted).
STREAMS = ("pipe:", "socket:")

MAX_THREADS = 1 << 16


def cut_short(pid):
    """[(tid, call, fd, what the fd is)] of the threads of live process
    `pid` a stop would interrupt in the middle of a transfer (bounded)."""
    try:
        tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))[:MAX_THREADS]
    except OSError:
        return []
    out = []
    for tid in tids:
        call = procfs.thread_syscall(pid, tid)
        name = NAMES.get(call[0]) if call else None
        if name not in TRANSFERS:
            continue
        fd = call[1][TRANSFERS[name]] & 0xFFFFFFFF
        try:
            what = os.readlink("/proc/%d/fd/%d" % (pid, fd))
        except OSError:
            continue
        if what.startswith(STREAMS):
            out.append((tid, name, fd, what))
    return out

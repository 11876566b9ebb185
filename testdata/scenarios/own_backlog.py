"""Scenario: threads parked reading connections this process made to its
own listening sockets and never accepted: one over loopback TCP, one over a
unix socket.  The other end of each waits in the backlog of a listener only
this process holds.

  tcp-reader   socket.recv on a TCP connection to its own listener
  unix-reader  socket.recv on a unix connection to its own listener
  main         reads a pipe nobody writes to

Truth: each reader's TID, role, fd and link; each listener's fd, link and
(unix) path.  Works on every Python from 3.6 on."""
import os
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()


def link(fd):
    return os.readlink("/proc/self/fd/%d" % fd)


def reader(role, conn):
    set_os_thread_name(role)
    TRUTH.thread(tid=gettid(), name=role, role=role, syscall="recvfrom", fd=conn.fileno(), link=link(conn.fileno()))
    conn.recv(1)


def main():
    path = os.path.join(tempfile.mkdtemp(prefix="pyhang-backlog-"), "own.sock")
    listeners = {"tcp": socket.socket(socket.AF_INET, socket.SOCK_STREAM),
                 "unix": socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)}
    listeners["tcp"].bind(("127.0.0.1", 0))
    listeners["unix"].bind(path)
    for s in listeners.values():
        s.listen(8)
    conns = {"tcp": socket.create_connection(listeners["tcp"].getsockname()),
             "unix": socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)}
    conns["unix"].connect(path)
    for kind, conn in conns.items():
        threading.Thread(target=reader, args=(kind + "-reader", conn), daemon=True).start()
    set_os_thread_name("backlog-main")
    idle_r, idle_w = os.pipe()
    TRUTH.thread(tid=gettid(), name="backlog-main", role="main", syscall="read")
    while len(TRUTH.data["threads"]) < 3:
        time.sleep(0.01)
    TRUTH.write_and_signal_ready(listeners={k: {"fd": s.fileno(), "link": link(s.fileno())}
                                            for k, s in listeners.items()}, path=path)
    os.read(idle_r, 1)  # forever: nobody writes


main()

"""Scenario: threads parked reading loopback TCP connections whose other
ends another process holds, one accepted, one still in the listener's
backlog.

The parent listens on 127.0.0.1 and forks a child that keeps the listening
socket (the parent closes its copy), accepts one connection and then reads
a pipe nobody writes to, holding the accepted socket.  The parent connects
twice: the child accepts the first; the second waits in the listener's
backlog, never accepted.  Parent threads:

  accepted  socket.recv on the first connection: its peer is the child's
            accepted socket
  backlog   socket.recv on the second: its peer is in the backlog of the
            listening socket only the child holds
  main      os.waitpid(child)

Truth: each thread's TID, role, fd and link (socket:[N]), the child's PID
and the listener's link.  Works on every Python from 3.6 on."""
import os
import socket
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()


def link(fd):
    return os.readlink("/proc/self/fd/%d" % fd)


def child(listener, accepted_w, idle_r):
    conn, _ = listener.accept()
    os.write(accepted_w, b"a")
    os.read(idle_r, 1)  # forever: nobody writes; conn and the listener stay open
    conn.close()
    os._exit(0)


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted_r, accepted_w = os.pipe()
    idle_r, idle_w = os.pipe()
    listener_link = link(listener.fileno())
    pid = os.fork()
    if pid == 0:
        child(listener, accepted_w, idle_r)
    address = listener.getsockname()
    listener.close()
    first = socket.create_connection(address)
    os.read(accepted_r, 1)  # the child holds the accepted end now
    second = socket.create_connection(address)  # waits in the backlog: the child accepts no more

    def reader(role, conn):
        set_os_thread_name(role)
        TRUTH.thread(tid=gettid(), name=role, role=role, syscall="recvfrom", fd=conn.fileno(),
                     link=link(conn.fileno()))
        conn.recv(1)

    for role, conn in (("accepted", first), ("backlog", second)):
        threading.Thread(target=reader, args=(role, conn), daemon=True).start()
    set_os_thread_name("tcp-main")
    TRUTH.thread(tid=gettid(), name="tcp-main", role="main", syscall="wait4")
    while len(TRUTH.data["threads"]) < 3:
        threading.Event().wait(0.01)
    TRUTH.write_and_signal_ready(child=pid, listener_link=listener_link)
    os.waitpid(pid, 0)


main()

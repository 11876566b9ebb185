"""Scenario: a client waits for the answer of a server that runs apart from
it, as a database or a cache does: the server is a daemon (forked twice,
its own session: its parent is init, or the nearest subreaper), so no tree
of processes from the client holds it.  The server accepts the client's
connection, reads its request and never answers.  Client threads:

  client    socket.recv on the connection, waiting for the answer
  main      sleeps

The server exits when the client's connection closes (it is in no process
group of the scenario's), or after ten minutes.  Truth: each thread's TID and role, the server's PID and its
parent.  Works on every Python from 3.6 on."""
import os
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()


def serve(listener, pid_w):
    """The daemon: tells the client its pid, then accepts and reads the request, waiting for more of it
    (it never answers); it exits when the client closes, or after ten minutes (it is in no process group
    of the test's)."""
    signal.alarm(600)
    os.write(pid_w, str(os.getpid()).encode())
    os.close(pid_w)
    conn, _ = listener.accept()
    while conn.recv(4096):
        pass
    os._exit(0)


def start_server():
    """(port, pid) of a daemon that listens on loopback: forked twice, the first child exits at once."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    pid_r, pid_w = os.pipe()
    first = os.fork()
    if first == 0:
        os.setsid()
        if os.fork() == 0:
            os.close(pid_r)
            set_os_thread_name("server-apart")
            serve(listener, pid_w)
        os._exit(0)
    os.waitpid(first, 0)
    os.close(pid_w)
    pid = int(os.read(pid_r, 32))
    port = listener.getsockname()[1]
    listener.close()
    return port, pid


def client(port, ready):
    set_os_thread_name("client")
    TRUTH.thread(tid=gettid(), name="client", role="client")
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(b"GET\n")
    ready.set()
    conn.recv(4096)   # the server never answers


def main():
    set_os_thread_name("apart-main")
    port, server = start_server()
    TRUTH.thread(tid=gettid(), name="apart-main", role="main")
    ready = threading.Event()
    threading.Thread(target=client, args=(port, ready), daemon=True).start()
    ready.wait()
    time.sleep(0.3)
    with open("/proc/%d/stat" % server) as f:
        server_parent = int(f.read().rsplit(")", 1)[1].split()[1])
    TRUTH.write_and_signal_ready(server=server, server_parent=server_parent)
    while True:
        time.sleep(3600)


main()

"""Scenario (urllib3 1.26 from Debian's python3-urllib3): a
PoolManager(maxsize=1, block=True) whose only connection a streaming
response holds.  An upstream server (a child process of this one, on a
loopback port) answers /stream with its headers and a first chunk, then
sends nothing more.  Thread `streamer` reads the response with
preload_content=False: it sits in recv on the pool's only connection,
waiting on the upstream process.  Thread `checkout` asks the same pool for
another request: with block=True it waits in the pool's checkout until the
streamer returns the connection.  Main joins the checkout thread.

Truth: each thread's TID and role, the upstream's PID, the pool's id()."""
import os
import socket
import sys
import threading

import urllib3

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()


def upstream(listener):
    """The child: answers every connection with headers and one chunk of a body that never ends."""
    while True:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
                     b"5\r\nfirst\r\n")


def streamer(pool, url, started):
    set_os_thread_name("streamer")
    r = pool.request("GET", url + "/stream", preload_content=False)
    r.read(5)
    TRUTH.thread(tid=gettid(), name="streamer", role="streamer", parked_in="recvfrom")
    started.set()
    r.read(1)   # the rest never comes


def checkout(pool, url, started):
    set_os_thread_name("checkout")
    started.wait()
    TRUTH.thread(tid=gettid(), name="checkout", role="checkout", parked_in="futex")
    pool.request("GET", url + "/other")   # the only connection is out: waits in the pool's checkout


def main():
    set_os_thread_name("urllib3-main")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    url = "http://127.0.0.1:%d" % listener.getsockname()[1]
    child = os.fork()
    if child == 0:
        set_os_thread_name("upstream")
        upstream(listener)
    listener.close()
    manager = urllib3.PoolManager(maxsize=1, block=True)
    pool = manager.connection_from_url(url)
    started = threading.Event()
    TRUTH.thread(tid=gettid(), name="urllib3-main", role="main", parked=False)
    threads = [threading.Thread(target=streamer, args=(pool, url, started), daemon=True),
               threading.Thread(target=checkout, args=(pool, url, started), daemon=True)]
    for t in threads:
        t.start()
    while len(TRUTH.data["threads"]) < 3:
        threading.Event().wait(0.01)
    TRUTH.write_and_signal_ready(upstream=child, pool=id(pool))
    try:
        threads[1].join()
    finally:
        os.kill(child, 9)


main()

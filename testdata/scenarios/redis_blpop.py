"""Scenario (a service on redis, Debian's python3-redis and a real
redis-server on 127.0.0.1:$PYHANG_REDIS_PORT): a worker waits in BLPOP
(no timeout) on a list no producer ever pushes to.  The worker (role
blpop) sits in recvfrom on its TCP socket to the redis-server, whose
reply comes only when a client pushes; the main thread joins it.

Truth: the worker's TID and role, the fd of its connection, the key, and the
redis-server's own client id of the connection (CLIENT ID)."""
import os
import sys
import threading

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
KEY = "pyhang:jobs:%d" % os.getpid()


def worker():
    set_os_thread_name("blpop")
    r = redis.Redis(host="127.0.0.1", port=int(os.environ["PYHANG_REDIS_PORT"]))
    client = r.client_id()
    conn = r.connection_pool.get_connection("BLPOP")
    r.connection_pool.release(conn)   # the pool gives the same connection to blpop
    TRUTH.thread(tid=gettid(), name="blpop", role="blpop", fd=conn._sock.fileno(), client_id=client,
                 parked_in="recvfrom")
    r.blpop([KEY], timeout=0)   # no producer: forever


def main():
    set_os_thread_name("redis-main")
    TRUTH.thread(tid=gettid(), name="redis-main", role="main", parked=False)
    t = threading.Thread(target=worker, daemon=True)
    t.start()
    while len(TRUTH.data["threads"]) < 2:
        threading.Event().wait(0.01)
    TRUTH.write_and_signal_ready(key=KEY)
    t.join()


main()

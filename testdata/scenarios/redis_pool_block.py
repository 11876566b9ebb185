"""Scenario (a service on redis, Debian's python3-redis 4.3 and a real
redis-server on 127.0.0.1:$PYHANG_REDIS_PORT): a BlockingConnectionPool
(max_connections=1, timeout=None: a checkout waits as long as it takes)
exhausted.  Thread `blpop` holds the pool's only connection inside
Redis.execute_command (its locals `pool` and `conn`) while its BLPOP, on a
list no producer pushes to, waits in the server: it sits in recvfrom on its
socket to the redis-server.  Thread `checkout` sends a GET through the same
pool: it waits in BlockingConnectionPool.get_connection's queue until blpop
returns the connection.  Main joins the checkout thread.

Truth: each thread's TID and role, the pool's id(), the blpop connection's
fd, the key."""
import os
import sys
import threading
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
KEY = "pyhang:pool:%d" % os.getpid()
RECVFROM = "45"   # x86_64


def in_recvfrom(tid):
    try:
        with open("/proc/self/task/%d/syscall" % tid) as f:
            return f.read().split()[0] == RECVFROM
    except OSError:
        return False


def connection_fd(pool):
    """The fd of the pool's only connection (read here: main's own frame must not hold the connection)."""
    (conn,) = pool._connections
    return conn._sock.fileno()


def blpop(r, started):
    set_os_thread_name("blpop")
    TRUTH.thread(tid=gettid(), name="blpop", role="blpop", parked_in="recvfrom")
    started.append(gettid())
    r.blpop([KEY], timeout=0)   # no producer: holds the pool's only connection for ever


def checkout(r):
    set_os_thread_name("checkout")
    TRUTH.thread(tid=gettid(), name="checkout", role="checkout", parked_in="futex")
    r.get(KEY)   # waits for a connection of the pool


def main():
    set_os_thread_name("redis-main")
    pool = redis.BlockingConnectionPool(host="127.0.0.1", port=int(os.environ["PYHANG_REDIS_PORT"]),
                                        max_connections=1, timeout=None)
    r = redis.Redis(connection_pool=pool)
    r.ping()
    TRUTH.thread(tid=gettid(), name="redis-main", role="main", parked_in="futex")
    started = []
    threading.Thread(target=blpop, args=(r, started), daemon=True).start()
    while not started or not in_recvfrom(started[0]):
        time.sleep(0.01)
    waiter = threading.Thread(target=checkout, args=(r,), daemon=True)
    waiter.start()
    while len(TRUTH.data["threads"]) < 3:
        time.sleep(0.01)
    TRUTH.write_and_signal_ready(pool=id(pool), fd=connection_fd(pool), key=KEY)
    waiter.join()


main()

"""Scenario (SQLAlchemy 1.4 from Debian's python3-sqlalchemy, packaged for
python3.11 only): a QueuePool exhausted (pool_size=2, max_overflow=0, a
pool_timeout of an hour: waits as long as a user's would).  Two threads
(roles holder-1, holder-2) each check out a connection (engine.connect())
and wait at a threading.Barrier of 3 parties for the third thread (role
checkout), which waits in the pool's checkout for a connection that only
the two holders could return.  Nothing can end it: the holders wait for
the waiter, the waiter for the holders.  The database is a SQLite file
(no server needed).  Main joins the checkout thread.

Truth: each thread's TID and role, the pool's and the barrier's id()."""
import os
import sys
import threading

import sqlalchemy
from sqlalchemy.pool import QueuePool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()


def holder(role, engine, barrier, held):
    set_os_thread_name(role)
    with engine.connect() as conn:
        conn.execute(sqlalchemy.text("SELECT 1"))
        TRUTH.thread(tid=gettid(), name=role, role=role, parked_in="futex")
        held.release()
        barrier.wait()   # the third party is the checkout below: it never comes


def checkout(engine, barrier, held):
    set_os_thread_name("checkout")
    held.acquire()
    held.acquire()
    TRUTH.thread(tid=gettid(), name="checkout", role="checkout", parked_in="futex")
    with engine.connect() as conn:   # both connections are out: waits in the pool's queue
        conn.execute(sqlalchemy.text("SELECT 1"))
        barrier.wait()


def main():
    set_os_thread_name("pool-main")
    path = os.path.join(os.getcwd(), "pool.db")
    engine = sqlalchemy.create_engine("sqlite:///" + path, poolclass=QueuePool, pool_size=2, max_overflow=0,
                                      pool_timeout=3600)
    barrier = threading.Barrier(3)
    held = threading.Semaphore(0)
    TRUTH.thread(tid=gettid(), name="pool-main", role="main", parked=False)
    threads = [threading.Thread(target=holder, args=("holder-%d" % i, engine, barrier, held), daemon=True)
               for i in (1, 2)]
    threads.append(threading.Thread(target=checkout, args=(engine, barrier, held), daemon=True))
    for t in threads:
        t.start()
    while len(TRUTH.data["threads"]) < 4:
        threading.Event().wait(0.01)
    TRUTH.write_and_signal_ready(pool=id(engine.pool), barrier=id(barrier))
    threads[-1].join()


main()

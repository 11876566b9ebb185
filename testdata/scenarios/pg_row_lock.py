"""Scenario (a service on PostgreSQL, Debian's python3-psycopg2 and a real
server: $PYHANG_PG_DSN): a row lock held across a wait in the program.

Thread A (role holds-row) updates row 1 of pyhang_items in a transaction it
does not commit, then waits for an Event that thread B sets after its own
UPDATE of that row.  B (role waits-row) sends the UPDATE, which waits in
the server for A's row lock: B sits in poll on its TCP socket to its
backend, whose process title says `UPDATE waiting`; A's backend says
`idle in transaction`.  A third thread (role idle-conn) holds a connection
outside any transaction (its backend says `idle`) and waits on an Event
nothing sets: it holds no lock B could wait for.  The main thread joins B.
Nothing in the program can end it: a cycle through the database.

Truth: each thread's TID, role, the fd of its connection and the PID of its
backend (pg_backend_pid())."""
import os
import sys
import threading

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
DSN = os.environ["PYHANG_PG_DSN"]


def connect():
    conn = psycopg2.connect(DSN)
    with conn.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        backend = cur.fetchone()[0]
    conn.commit()
    return conn, backend


def holds_row(updated, done):
    set_os_thread_name("holds-row")
    conn, backend = connect()
    cur = conn.cursor()
    cur.execute("UPDATE pyhang_items SET v = v + 1 WHERE id = 1")   # the row lock, held until commit
    TRUTH.thread(tid=gettid(), name="holds-row", role="holds-row", fd=conn.fileno(), backend=backend,
                 parked_in="futex")
    updated.set()
    done.wait()
    conn.commit()


def waits_row(updated, done):
    set_os_thread_name("waits-row")
    conn, backend = connect()
    updated.wait()
    TRUTH.thread(tid=gettid(), name="waits-row", role="waits-row", fd=conn.fileno(), backend=backend,
                 parked_in="poll")
    with conn.cursor() as cur:
        cur.execute("UPDATE pyhang_items SET v = v + 10 WHERE id = 1")   # waits for A's row lock
    done.set()
    conn.commit()


def idle_conn(never):
    set_os_thread_name("idle-conn")
    conn, backend = connect()   # committed: no transaction, no row lock
    TRUTH.thread(tid=gettid(), name="idle-conn", role="idle-conn", fd=conn.fileno(), backend=backend,
                 parked_in="futex")
    never.wait()


def main():
    set_os_thread_name("pg-main")
    setup = psycopg2.connect(DSN)
    setup.autocommit = True
    with setup.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS pyhang_items (id int PRIMARY KEY, v int)")
        cur.execute("INSERT INTO pyhang_items VALUES (1, 0) ON CONFLICT (id) DO NOTHING")
    setup.close()
    TRUTH.thread(tid=gettid(), name="pg-main", role="main", parked=False)
    updated = threading.Event()   # A holds the row
    done = threading.Event()      # B's update went through: A may commit
    a = threading.Thread(target=holds_row, args=(updated, done), daemon=True)
    b = threading.Thread(target=waits_row, args=(updated, done), daemon=True)
    a.start()
    b.start()
    threading.Thread(target=idle_conn, args=(threading.Event(),), daemon=True).start()
    while len(TRUTH.data["threads"]) < 4:
        threading.Event().wait(0.01)
    TRUTH.write_and_signal_ready()
    b.join()


main()

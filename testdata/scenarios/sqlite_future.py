"""Scenario (the standard library's sqlite3 with concurrent.futures): the
main thread holds an open write transaction on a database and waits for a
ThreadPoolExecutor future whose work item writes to the same database on
another connection: the worker runs that item and retries in SQLite's busy
handler for as long as its timeout lasts, while the transaction it waits
for can only end after the future does.  Truth: the main thread, the worker
(role worker) and the id of the future.  Works on every Python from 3.6 on."""
import concurrent.futures
import os
import sqlite3
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
DB = os.path.join(os.path.dirname(os.environ["PYHANG_TRUTH"]), "jobs.db")
started = threading.Event()


def record_job():
    set_os_thread_name("worker")
    TRUTH.thread(tid=gettid(), name="worker", role="worker")
    connection = sqlite3.connect(DB, timeout=3600)
    started.set()
    connection.execute("INSERT INTO jobs VALUES (2)")   # busy: main's transaction holds the write lock
    connection.commit()


def main():
    set_os_thread_name("sqlite-main")
    TRUTH.thread(tid=gettid(), name="sqlite-main", role="main")
    setup = sqlite3.connect(DB)
    setup.execute("CREATE TABLE IF NOT EXISTS jobs (id INTEGER)")
    setup.commit()
    setup.close()
    connection = sqlite3.connect(DB, isolation_level=None)
    connection.execute("BEGIN IMMEDIATE")               # the write lock, until COMMIT
    connection.execute("INSERT INTO jobs VALUES (1)")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(record_job)
    started.wait()
    threading.Thread(target=lambda: (time.sleep(0.5), TRUTH.write_and_signal_ready(future=id(future))),
                     daemon=True).start()
    future.result()
    connection.execute("COMMIT")


main()

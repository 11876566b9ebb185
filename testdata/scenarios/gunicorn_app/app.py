"""Scenario (a real gunicorn, run with `--preload`): the WSGI module starts,
at import, a thread that takes the module's global lock MODEL_LOCK and holds
it (a model being loaded or refreshed).  With --preload the module is
imported once, in the arbiter, before it forks its workers: each worker
inherits MODEL_LOCK locked, by a thread that does not exist in it, and the
first request's handler blocks on it for ever.

Run as: python -m gunicorn --preload -w 1 -b unix:gunicorn.sock app:application,
in the directory of PYHANG_TRUTH, with this directory on PYTHONPATH.  A
second thread started at import (in the arbiter only) sends one request
once the worker listens, and records the truth from inside the processes:
the arbiter's PID and lock-holding thread, the worker's PID and the TID of
the thread blocked in the handler (which the handler records itself), the
lock's address."""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

MODEL_LOCK = threading.Lock()
LOCK_ID = id(MODEL_LOCK)   # (the truth's threads keep no reference to the lock on their own stacks)
TRUTH = Truth()
WORKER_RECORD = os.environ["PYHANG_TRUTH"] + ".worker"
LOADED = threading.Event()   # never set
SOCKET = os.path.join(os.path.dirname(os.environ["PYHANG_TRUTH"]), "gunicorn.sock")


def refresh_model():
    with MODEL_LOCK:   # "loading the model": held while the arbiter forks its workers
        LOADED.wait()


def application(environ, start_response):
    fork_common.record(WORKER_RECORD, pid=os.getpid(), tid=gettid(), ppid=os.getppid(), lock=LOCK_ID)
    with MODEL_LOCK:   # inherited locked: blocks for ever
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"model ready\n"]


def request_and_report():
    set_os_thread_name("reporter")
    deadline = time.monotonic() + 30
    client = socket.socket(socket.AF_UNIX)
    while True:
        try:
            client.connect(SOCKET)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    client.sendall(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
    (worker,) = fork_common.wait_records([WORKER_RECORD])
    fork_common.wait_blocked(worker["pid"], worker["tid"])
    TRUTH.write_and_signal_ready(arbiter=os.getpid(), worker=worker, lock=LOCK_ID)
    while True:   # the client keeps its connection open
        time.sleep(3600)


fork_common.start_blocked(TRUTH, "holds-lock", refresh_model, 202)   # asleep (futex) holding it
threading.Thread(target=request_and_report, daemon=True).start()

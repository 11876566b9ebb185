"""Scenario (a real multiprocessing SyncManager): a client process takes a
manager's Lock and is killed holding it (SIGKILL).  The server thread that
served it sees the connection close and ends; the Lock, a threading.Lock in
the server, stays locked with no live thread to release it.  The main
process then asks for the same Lock: the server thread serving it blocks on
it for ever, and the main thread waits for that thread's answer.

The main process has a thread running when it starts the manager (fork
start method): the server is a fork child with a parent thread lost at
fork, though fork has nothing to do with the lock, which the server made
after it started.  `simplequeue`: a thread of the main process waits to get
from an empty queue.SimpleQueue too (a C get, no Python frame of queue.py).

Truth, from inside the processes: the server's PID, the lock's address in
the server (its token), the server thread blocked on it (read by a function
the server runs: the thread whose serve_client frame calls `acquire`), the
killed client's PID."""
import multiprocessing
import multiprocessing.managers
import os
import queue
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[1] if len(sys.argv) > 1 else ""
QUEUE = queue.SimpleQueue() if MODE == "simplequeue" else None


def server_truth():
    """Run by the server: its PID, and the LWP of each thread whose
    serve_client frame calls the method `acquire` of a managed object."""
    blocked = []
    for ident, frame in sys._current_frames().items():
        f = frame
        while f is not None and f.f_code.co_name != "serve_client":
            f = f.f_back
        if f is not None and f.f_locals.get("methodname") == "acquire":
            t = threading._active.get(ident)
            blocked.append(getattr(t, "native_id", None))
    return {"pid": os.getpid(), "blocked": blocked, "threads": threading.active_count()}


class Manager(multiprocessing.managers.SyncManager):
    pass


Manager.register("server_truth", server_truth)


def take_and_die(lock, path):
    lock.acquire()
    fork_common.record(path, pid=os.getpid())
    os.kill(os.getpid(), signal.SIGKILL)


def heartbeat():
    set_os_thread_name("heartbeat")
    while True:
        time.sleep(3600)


def getter():
    set_os_thread_name("sq-getter")
    TRUTH.thread(tid=gettid(), name="sq-getter", role="simplequeue-getter")
    QUEUE.get()


def report_when_blocked(manager, lock, killed_path):
    (killed,) = fork_common.wait_records([killed_path])
    server = manager._process.pid
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = manager.server_truth()._getvalue()
        if found["blocked"] and all(fork_common.wait_blocked(server, tid, timeout=1) for tid in found["blocked"]):
            break
        time.sleep(0.05)
    TRUTH.write_and_signal_ready(server=server, server_blocked=found["blocked"], lock=int(lock._token.id, 16),
                                 killed=killed["pid"], queue=id(QUEUE) if QUEUE is not None else None)


def main():
    set_os_thread_name("manager-main")
    TRUTH.thread(tid=gettid(), name="manager-main", role="main", parked=False)
    threading.Thread(target=heartbeat, daemon=True).start()
    ctx = multiprocessing.get_context("fork")   # (3.14 made forkserver the default)
    manager = Manager(ctx=ctx)
    manager.start()
    lock = manager.Lock()
    killed_path = os.environ["PYHANG_TRUTH"] + ".killed"
    client = ctx.Process(target=take_and_die, args=(lock, killed_path))
    client.start()
    client.join()
    if QUEUE is not None:
        threading.Thread(target=getter, daemon=True).start()
    threading.Thread(target=report_when_blocked, args=(manager, lock, killed_path), daemon=True).start()
    lock.acquire()   # served by a server thread that blocks on the Lock the killed client holds


if __name__ == "__main__":
    main()

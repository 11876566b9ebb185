"""Scenario: a healthy server between requests.  Every thread is idle by
design, none is hung: pyhang's answer must be the all-clear (exit 0).

  main       its selector loop: epoll_wait on a listening socket, no timeout
  acceptor   socket.accept() on a second listening socket
  pool-idle  the 2 workers of a ThreadPoolExecutor that ran its tasks
  consumer   queue.Queue.get() on the work queue main holds (main's frame
             references it: main would put the next request there)
  stopper    Event.wait() on the server's stop event
  ticker     time.sleep(60) in a housekeeping loop

Truth: each thread's role and TID.  Works on every Python from 3.6 on."""
import concurrent.futures
import os
import queue
import selectors
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
STOP = threading.Event()
started = threading.Semaphore(0)


def record(role):
    set_os_thread_name(role)
    TRUTH.thread(tid=gettid(), name=role, role=role)
    started.release()


def listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    return s


def acceptor(sock):
    record("acceptor")
    sock.accept()


def consumer(work):
    record("consumer")
    work.get()


def stopper():
    record("stopper")
    STOP.wait()


def ticker():
    record("ticker")
    while not STOP.is_set():
        time.sleep(60)


def pool_task(barrier):
    barrier.wait()
    record("pool-idle")


def serve(sel, work, pool):
    TRUTH.thread(tid=gettid(), name="server-main", role="main")
    TRUTH.write_and_signal_ready()
    while not STOP.is_set():
        for key, _ in sel.select():      # no timeout: waits for the next client
            conn, _ = key.fileobj.accept()
            work.put(conn)


def main():
    set_os_thread_name("server-main")
    work = queue.Queue()
    for target, args in ((acceptor, (listener(),)), (consumer, (work,)), (stopper, ()), (ticker, ())):
        threading.Thread(target=target, args=args, daemon=True).start()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    barrier = threading.Barrier(2)
    for f in [pool.submit(pool_task, barrier) for _ in range(2)]:
        f.result()
    for _ in range(6):
        started.acquire()
    time.sleep(0.3)   # each thread from its record to its wait
    sel = selectors.DefaultSelector()
    sel.register(listener(), selectors.EVENT_READ)
    serve(sel, work, pool)


main()

"""Scenario: an aiohttp server whose request handler calls the server
itself through `requests` (a blocking HTTP client) on the event loop's
thread.  The loop is blocked inside the handler, so the server never
accepts the connection `requests` made: the loop's thread reads a TCP
socket whose peer waits in the backlog of the process's own listening
socket, which only that blocked loop would accept.  A hang no lock
explains; a user sees "the server stopped answering".

A client thread sends the first request (GET /report) and waits for its
answer, which never comes.  Threads:

  loop     runs the aiohttp application: blocked in requests.get() inside
           the handler `report`, reading its socket to the server
  client   GET /report through requests (urllib3): reads its socket to the
           server, which accepted it and is stuck in the handler

Truth: each thread's TID and role, the port, the handler's call line
(call_line), and the links (socket:[N]) of the listening socket and of the
handler's connection.  Needs Debian's python3-aiohttp and python3-requests
(with an interpreter that is not Debian's, set PYTHONPATH to
/usr/lib/python3/dist-packages and AIOHTTP_NO_EXTENSIONS=1 and the like:
see gdbext/tests/test_aiohttp_self_call.py)."""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402

import requests  # noqa: E402
from aiohttp import web  # noqa: E402

TRUTH = Truth()
PORT = None


def socket_links():
    """{fd: link} of this process's sockets."""
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if target.startswith("socket:"):
            out[int(fd)] = target
    return out


def when_parked(before):
    """Once the handler's own connection exists (a socket that was not
    there before it started), wait for the loop's thread to sleep in it and
    write the truth."""
    for _ in range(500):
        new = set(socket_links().values()) - before
        if new:
            break
        time.sleep(0.01)
    time.sleep(0.5)
    TRUTH.write_and_signal_ready(port=PORT, call_line=CALL_LINE, handler_links=sorted(new),
                                 listening=LISTENING)


async def report(request):
    TRUTH.thread(tid=gettid(), role="loop", stack=python_stack())
    threading.Thread(target=when_parked, args=(set(socket_links().values()),), daemon=True).start()
    r = requests.get("http://127.0.0.1:%d/inner" % PORT, timeout=None)  # CALL_LINE: the server is this loop
    return web.Response(text=r.text)


async def inner(request):
    return web.Response(text="never reached")


CALL_LINE = next(i for i, l in enumerate(open(__file__), 1) if l.rstrip().endswith("# CALL_LINE: the server is this loop"))


def client():
    set_os_thread_name("client")
    TRUTH.thread(tid=gettid(), role="client")
    requests.get("http://127.0.0.1:%d/report" % PORT, timeout=None)


def main():
    global PORT, LISTENING
    set_os_thread_name("loop")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    PORT = listener.getsockname()[1]
    LISTENING = os.readlink("/proc/self/fd/%d" % listener.fileno())
    app = web.Application()
    app.add_routes([web.get("/report", report), web.get("/inner", inner)])
    threading.Thread(target=client, daemon=True).start()
    web.run_app(app, sock=listener, print=None, handle_signals=False)


LISTENING = None

if __name__ == "__main__":
    main()

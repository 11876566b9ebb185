"""Scenario: an asyncio event loop blocked by a synchronous call in a
coroutine (time.sleep in a task's step), while another task waits to run:
a hang without any cycle.  Mode `socket`: the call is a read from a socket
file object, which blocks inside the standard library (socket.py) below
the coroutine's own line.  Truth: the loop's thread (role loop), the line
of the blocking call (call_line).  Works on every Python from 3.7 on."""
import asyncio
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()


async def heartbeat():
    while True:
        await asyncio.sleep(0.1)


MODE = sys.argv[1] if len(sys.argv) > 1 else "sleep"


async def handler():
    await asyncio.sleep(0.2)   # the heartbeat has run: the loop works, then this step blocks it
    threading.Thread(target=lambda: (time.sleep(0.3), TRUTH.write_and_signal_ready(call_line=CALL_LINE)),
                     daemon=True).start()
    if MODE == "socket":
        mine, _theirs = socket.socketpair()
        mine.makefile("rb").read(1)   # CALL_LINE: nothing is ever sent
    time.sleep(3600)


CALL_LINE = next(i for i, l in enumerate(open(__file__), 1) if l.rstrip().endswith("# CALL_LINE: nothing is ever sent"))


async def main():
    set_os_thread_name("loop")
    TRUTH.thread(tid=gettid(), name="loop", role="loop", **({} if MODE == "socket" else {"parked_in": "clock_nanosleep"}))
    asyncio.ensure_future(heartbeat())
    await handler()


asyncio.new_event_loop().run_until_complete(main())   # (3.14: get_event_loop() makes no loop)

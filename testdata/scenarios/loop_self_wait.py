"""Scenario: a coroutine on an event loop's thread hands work to that same
loop with asyncio.run_coroutine_threadsafe and waits for it with
.result(): the loop's thread waits for a concurrent.futures.Future that
only its own loop, which it is blocking, can complete.  A certain wait for
itself.

Truth: the loop's thread (role loop), the id() of the Future it waits on
(future), the line of the .result() call (call_line).  Works on every
Python from 3.7 on."""
import asyncio
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()


async def fetch():
    await asyncio.sleep(0)
    return 42


def fetch_now(loop):
    """A synchronous helper written for other threads, called from the loop's own."""
    future = asyncio.run_coroutine_threadsafe(fetch(), loop)
    TRUTH.thread(tid=gettid(), name="loop", role="loop", future=id(future))
    threading.Thread(target=lambda: (time.sleep(0.3), TRUTH.write_and_signal_ready(call_line=CALL_LINE)),
                     daemon=True).start()
    return future.result()   # CALL_LINE: the loop that would run fetch() is this thread's


CALL_LINE = next(i for i, l in enumerate(open(__file__), 1) if l.rstrip().endswith("# CALL_LINE: the loop that "
                                                                                  "would run fetch() is this thread's"))


async def main():
    set_os_thread_name("loop")
    await asyncio.sleep(0.05)   # the loop runs, then this step blocks it
    fetch_now(LOOP)


LOOP = asyncio.new_event_loop()
LOOP.run_until_complete(main())

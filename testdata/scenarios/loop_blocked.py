"""Scenario: an asyncio event loop blocked by a synchronous call in a
coroutine (time.sleep in a task's step), while another task waits to run:
a hang without any cycle.  Truth: the loop's thread (role loop).  Works on
every Python from 3.7 on."""
import asyncio
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()


async def heartbeat():
    while True:
        await asyncio.sleep(0.1)


async def handler():
    await asyncio.sleep(0.2)   # the heartbeat has run: the loop works, then this step blocks it
    threading.Thread(target=lambda: (time.sleep(0.3), TRUTH.write_and_signal_ready()), daemon=True).start()
    time.sleep(3600)


async def main():
    set_os_thread_name("loop")
    TRUTH.thread(tid=gettid(), name="loop", role="loop", parked_in="clock_nanosleep")
    asyncio.ensure_future(heartbeat())
    await handler()


asyncio.get_event_loop().run_until_complete(main())

"""Scenario: asyncio tasks waiting on each other, on asyncio primitives and
on threads, and two event loops blocked by synchronous calls.  Each task
records its id(), name, the line it waits at and what it awaits.

Loop 1 (the main thread, "aio-main"):
  cycle-a, cycle-b     await each other: an await cycle
  gather-c, gather-d   gather-c awaits gather(gather-d), gather-d awaits gather-c
  nested               outer() -> middle() -> inner() -> Event.wait()
  sleeper              asyncio.sleep(3600): its deadline is recorded
  lock-holder          holds an asyncio.Lock, waits on an Event nobody sets
  lock-waiter          waits for that Lock
  queue-getter         Queue.get on an empty asyncio.Queue
  executor-waiter      run_in_executor(None, f): f blocks in an executor thread
  failed               raised ValueError; nobody retrieves it (kept referenced)
  overdue              asyncio.sleep(0.05), begun just before blocker blocks the
                       loop: its deadline passes while the loop is blocked
  blocker              the task running now: time.sleep() inside the
                       coroutine blocks the loop while callbacks are ready
  rcts-sleep-caller (thread) run_coroutine_threadsafe(..., loop 1).result()
                       after loop 1 blocked: its callback waits in loop 1's
                       ready queue

Loop 2 (thread "aio-loop2"):
  grabber              run_coroutine_threadsafe'd by the thread
                       "rcts-lock-caller", which holds a threading.Lock and
                       waits on .result(); grabber's coroutine acquires that
                       Lock synchronously: the loop's thread and the caller
                       deadlock

Works on 3.8 and later.  usage: asyncio_tasks.py [pure]
  pure: asyncio's pure-Python Task and Future instead of _asyncio's C ones
"""
import sys

if sys.argv[1:] == ["pure"]:
    sys.modules["_asyncio"] = None  # asyncio then keeps its pure-Python classes
import asyncio  # noqa: E402
import concurrent.futures  # noqa: E402
import os  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
TASKS = {}       # name -> Task
FACTS = {}       # name -> {"line": where it waits, ...}
KEEP = []        # finished tasks kept referenced (the registries are weak)
SWITCH = threading.Lock()           # held by rcts-lock-caller, wanted by grabber on loop 2
EXECUTOR_BLOCK = threading.Event()  # never set
loop1_blocked = threading.Event()
loop2_ready = threading.Event()
LOOP2 = {}


def here():
    """The line of the caller: where the next statement waits is here() + 1."""
    return sys._getframe(1).f_lineno


async def cycle(name, other):
    await asyncio.sleep(0)
    FACTS[name] = {"line": here() + 1, "awaits": other}
    await TASKS[other]


async def gather_c():
    await asyncio.sleep(0)
    FACTS["gather-c"] = {"line": here() + 1, "gathers": ["gather-d"]}
    await asyncio.gather(TASKS["gather-d"])


async def inner(event):
    FACTS["nested"]["lines"].insert(0, here() + 1)
    await event.wait()


async def middle(event):
    FACTS["nested"]["lines"].insert(0, here() + 1)
    await inner(event)


async def outer(event):
    FACTS["nested"] = {"lines": [here() + 1]}
    await middle(event)


async def sleeper():
    FACTS["sleeper"] = {"line": here() + 1, "when": asyncio.get_event_loop().time() + 3600}
    await asyncio.sleep(3600)


async def overdue():
    FACTS["overdue"] = {"line": here() + 1, "when": asyncio.get_event_loop().time() + 0.05}
    await asyncio.sleep(0.05)


async def lock_holder(lock, never):
    async with lock:
        FACTS["lock-holder"] = {"line": here() + 1}
        await never.wait()


async def lock_waiter(lock):
    await asyncio.sleep(0)
    FACTS["lock-waiter"] = {"line": here() + 1, "object": id(lock)}
    await lock.acquire()


async def queue_getter(q):
    FACTS["queue-getter"] = {"line": here() + 1, "object": id(q)}
    await q.get()


def executor_job():
    set_os_thread_name("aio-executor")
    FACTS["executor-waiter"]["tid"] = gettid()
    EXECUTOR_BLOCK.wait()


async def executor_waiter():
    FACTS["executor-waiter"] = {"line": here() + 1}
    await asyncio.get_event_loop().run_in_executor(None, executor_job)


async def failed():
    raise ValueError("nobody looks at this")


async def blocker():
    asyncio.get_event_loop().call_soon(lambda: None)  # a callback ready while the loop is blocked
    FACTS["blocker"] = {"line": here() + 2}
    loop1_blocked.set()
    time.sleep(3600)


async def grab():
    LOOP2["grabber-line"] = here() + 1
    SWITCH.acquire()


async def never_done():
    await asyncio.Event().wait()


def rcts_lock_caller():
    set_os_thread_name("rcts-lock")
    tid = gettid()
    loop2_ready.wait()
    with SWITCH:
        future = asyncio.run_coroutine_threadsafe(grab(), LOOP2["loop"])
        TRUTH.thread(tid=tid, name="rcts-lock", role="rcts-lock-caller", future=id(future), lock=id(SWITCH))
        future.result()


def rcts_sleep_caller(loop):
    set_os_thread_name("rcts-sleep")
    loop1_blocked.wait()
    future = asyncio.run_coroutine_threadsafe(never_done(), loop)
    TRUTH.thread(tid=gettid(), name="rcts-sleep", role="rcts-sleep-caller", future=id(future))
    future.result()


def loop2_thread():
    set_os_thread_name("aio-loop2")
    loop = asyncio.new_event_loop()
    LOOP2["loop"] = loop
    TRUTH.thread(tid=gettid(), name="aio-loop2", role="loop2", loop=id(loop))
    loop.call_soon(loop2_ready.set)
    loop.run_forever()


def create(name, coro):
    t = asyncio.get_event_loop().create_task(coro)
    t.set_name(name)
    TASKS[name] = t
    return t


async def main():
    loop = asyncio.get_event_loop()
    TRUTH.thread(tid=gettid(), name="aio-main", role="loop1", loop=id(loop))
    create("cycle-a", cycle("cycle-a", "cycle-b"))
    create("cycle-b", cycle("cycle-b", "cycle-a"))
    create("gather-c", gather_c())
    create("gather-d", cycle("gather-d", "gather-c"))
    never = asyncio.Event()
    create("nested", outer(never))
    create("sleeper", sleeper())
    lock = asyncio.Lock()
    create("lock-holder", lock_holder(lock, never))
    create("lock-waiter", lock_waiter(lock))
    create("queue-getter", queue_getter(asyncio.Queue()))
    create("executor-waiter", executor_waiter())
    KEEP.append(create("failed", failed()))
    threading.Thread(target=loop2_thread, name="aio-loop2", daemon=True).start()
    threading.Thread(target=rcts_lock_caller, name="rcts-lock", daemon=True).start()
    threading.Thread(target=rcts_sleep_caller, args=(loop,), name="rcts-sleep", daemon=True).start()
    for _ in range(20):
        await asyncio.sleep(0.01)
    while "tid" not in FACTS["executor-waiter"] or not loop2_ready.is_set():
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)  # loop 2 runs grabber into SWITCH.acquire()
    create("overdue", overdue())  # its first step, then blocker's, in the same turn of the loop
    create("blocker", blocker())
    await asyncio.sleep(0)  # blocker starts: from here the loop is stuck in time.sleep


def run():
    set_os_thread_name("aio-main")
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(1))
    main_task = loop.create_task(main())
    main_task.set_name("main")
    TASKS["main"] = main_task

    def report_when_blocked():
        loop1_blocked.wait()
        while len(TRUTH.data["threads"]) < 4 or time.monotonic() <= FACTS["overdue"]["when"]:
            time.sleep(0.01)
        time.sleep(0.2)
        # What each task awaits, as asyncio itself says.
        tasks = {name: {"id": id(t), "done": t.done()} for name, t in TASKS.items()}
        for name, t in TASKS.items():
            w = t._fut_waiter
            tasks[name].update(FACTS.get(name, {}), waiter=id(w) if w is not None else None,
                               waiter_type=type(w).__name__ if w is not None else None)
        gathering = TASKS["gather-c"]._fut_waiter
        tasks["gather-c"]["gathering_children"] = [id(c) for c in gathering._children]
        TRUTH.write_and_signal_ready(tasks=tasks, loop2=dict(LOOP2, loop=id(LOOP2["loop"])),
                                     c_tasks=type(main_task).__module__ == "_asyncio")
    threading.Thread(target=report_when_blocked, daemon=True).start()
    loop.run_until_complete(main_task)


if __name__ == "__main__":
    run()

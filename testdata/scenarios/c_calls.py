"""Scenario: threads inside calls of CPython's own C callables.

  sleep       time.sleep(3600)
  acquire     LOCK.acquire(); main holds LOCK
  select      select.select() on the read end of a pipe nobody writes
  read        os.read() of another such pipe
  sorted      sorted(..., key=blocking_key): the key function, called by
              sorted's C code, blocks in LOCK.acquire()
  list-sort   items.sort(key=blocking_key), likewise
  init        MyList(blocking_items()): MyList.__init__ calls list's own
              __init__ through super(), which iterates a generator that
              blocks in LOCK.acquire(); MyList itself is a Python class
  nested      results.append(time.sleep(3600)): the call in progress is
              the inner one, its callable above the outer's on the stack
  after       select.select() after a `with` block and a try/finally in
              the same function (code whose depth 3.6 - 3.8 count apart)
  finally     select.select() inside a `finally:` body, which 3.6 - 3.8
              enter with one value pushed normally and six by an
              exception: recorded as not to be named before 3.9
  main        holds LOCK, sleeps in time.sleep

Truth: each thread's role and TID, and for each call it is inside, the
calling Python frame's function, the callable's repr() and its qualified
name as CPython's type names write it ("time.sleep", "list.sort",
"_thread.lock.acquire"), in each form a version may load it in (a method
unbound, as LOAD_METHOD leaves it, or bound to its object, as LOAD_ATTR
does: 3.6, and calls with keywords before 3.11); a frame that calls a
Python class records none.
Works on every Python from 3.6 on."""
import os
import select
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
LOCK = threading.Lock()
SELECT_READ, SELECT_WRITE = os.pipe()
READ_READ, READ_WRITE = os.pipe()
started = threading.Semaphore(0)


def type_name(t):
    """tp_name of a type: builtins' types without their module."""
    return t.__qualname__ if t.__module__ == "builtins" else "%s.%s" % (t.__module__, t.__qualname__)


def qualified(c):
    """The callable's name as pyhang writes it from the C structures."""
    owner = getattr(c, "__objclass__", None)
    if owner is not None:   # method, slot wrapper: unbound
        return "%s.%s" % (type_name(owner), c.__name__)
    self = getattr(c, "__self__", None)
    if self is None or type(self).__name__ == "module":
        return "%s.%s" % (c.__module__, c.__name__) if c.__module__ else c.__name__
    return "%s.%s" % (type_name(type(self)), c.__name__)


def call(frame, *callables, unknown_before=None):
    """What a frame calls: any of `callables` (the form a version loads it in), or nothing (None);
    `unknown_before`: the version before which the stack depth at the call cannot be told from the code."""
    return {"frame": frame, "options": [{"function": qualified(c), "repr": repr(c)} for c in callables],
            "unknown_before": unknown_before}


def record(role, *calls):
    set_os_thread_name(role)
    TRUTH.thread(tid=gettid(), name=role, role=role, calls=list(calls))
    started.release()


def sleeper():
    record("sleep", call("sleeper", time.sleep))
    time.sleep(3600)


def acquirer():
    record("acquire", call("acquirer", type(LOCK).acquire, LOCK.acquire))
    LOCK.acquire()


def selector():
    record("select", call("selector", select.select))
    select.select([SELECT_READ], [], [])


def reader():
    record("read", call("reader", os.read))
    os.read(READ_READ, 1)


def nester():
    results = []
    record("nested", call("nester", time.sleep))
    results.append(time.sleep(3600))


SPARE = threading.Lock()
AFTER_READ, AFTER_WRITE = os.pipe()
FINALLY_READ, FINALLY_WRITE = os.pipe()


def after_blocks():
    record("after", call("after_blocks", select.select))
    with SPARE:
        len("inside")
    try:
        len("tried")
    finally:
        len("cleaned")
    select.select([AFTER_READ], [], [])


def in_finally():
    record("finally", call("in_finally", select.select, unknown_before=[3, 9]))
    try:
        len("tried")
    finally:
        select.select([FINALLY_READ], [], [])


def blocking_key(x):
    LOCK.acquire()
    return x


def sorted_caller():
    record("sorted", call("sorted_caller", sorted), call("blocking_key", type(LOCK).acquire, LOCK.acquire))
    sorted([3, 1, 2], key=blocking_key)


def list_sorter():
    items = [3, 1, 2]
    record("list-sort", call("list_sorter", list.sort, items.sort), call("blocking_key", type(LOCK).acquire, LOCK.acquire))
    items.sort(key=blocking_key)


def blocking_items():
    LOCK.acquire()
    yield 1


class MyList(list):
    def __init__(self, iterable):
        super().__init__(iterable)


def list_maker():
    probe = MyList([])
    record("init", call("list_maker"),
           call("MyList.__init__" if sys.version_info >= (3, 11) else "__init__",
                list.__init__, super(MyList, probe).__init__),
           call("blocking_items", type(LOCK).acquire, LOCK.acquire))
    MyList(blocking_items())


def in_syscall(tid):
    try:
        with open("/proc/self/task/%d/syscall" % tid) as f:
            return f.read().split()[0] != "running"
    except OSError:
        return False


def main():
    set_os_thread_name("calls-main")
    TRUTH.thread(tid=gettid(), name="calls-main", role="main", calls=[call("main", time.sleep)])
    LOCK.acquire()
    workers = (sleeper, acquirer, selector, reader, sorted_caller, list_sorter, list_maker, nester, after_blocks,
               in_finally)
    for target in workers:
        threading.Thread(target=target, daemon=True).start()
    for _ in workers:
        started.acquire()
    tids = [t["tid"] for t in TRUTH.data["threads"] if t["role"] != "main"]
    settled = 0
    while settled < 3:   # every worker asleep in its call, three looks in a row
        time.sleep(0.1)
        settled = settled + 1 if all(in_syscall(tid) for tid in tids) else 0
    TRUTH.write_and_signal_ready()
    while True:
        time.sleep(3600)


main()

"""Scenario: a worker thread parked three Python frames deep, whose frames
hold locals of every kind pyhang renders: arguments (positional, *args,
**kwargs), None, bools, ints (one larger than 64 bits), floats, str of each
storage kind, bytes longer than pyhang shows, tuple, list, dict, set,
frozenset, a list of 100 items, a threading.Lock (held), an RLock (held
twice), the thread's own threading.Thread, instances of classes defined in
Python (no attributes, a __dict__, an instance inside another, __slots__,
one that holds itself), exceptions (built-in and user-defined, no, one,
two and 50 arguments, one caught), subclasses of list and dict, a cell a
nested function captures and that function's free variable, and a local
still unbound where the thread sleeps.

It records, per frame (innermost first), each local's name, its kind and
what pyhang must print for it: `exact` (Python's own repr where pyhang's
is the same, or pyhang's name for an object, built from id()) or `prefix`
(for values pyhang shows only the start of).  The main thread records its
module-level frame's globals the same way, and both stacks.
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402

TRUTH = Truth()
CONFIG = {"retries": 3, "mode": "strict"}
READY = threading.Event()


class Widget:
    pass


class Point:
    def __init__(self, an_int, name):
        self.an_int = an_int
        self.name = name


class Slotted:
    __slots__ = ("a", "b")


class Node:
    pass


class MyError(Exception):
    pass


class Stack(list):
    pass


class Registry(dict):
    pass


def instance_text(obj, names):
    """What pyhang prints for an instance of a class defined in Python
    (libpython's form): its attributes `names`, read with getattr (which
    leaves a 3.11+ instance's inline values as they are); one met again
    inside itself is <Name(...) at remote 0x…>."""
    return _instance_text(obj, names, [])


def _instance_text(obj, names, seen):
    tail = " at remote 0x%x>" % id(obj)
    if any(o is obj for o in seen):
        return "<%s(...)%s" % (type(obj).__name__, tail)
    parts = []
    for n in names:
        v = getattr(obj, n)
        text = _instance_text(v, attribute_names(v), seen + [obj]) if type(v) in (Point, Node) else repr(v)
        parts.append("%s=%s" % (n, text))
    return "<%s%s%s" % (type(obj).__name__, "(%s)" % ", ".join(parts) if parts else "", tail)


def attribute_names(obj):
    return {Point: ["an_int", "name"], Node: ["me"]}[type(obj)]


def exception_text(e):
    """BaseException's repr: Python's own from 3.7 (3.6 printed T('x',) for
    one argument; pyhang prints T('x') for every version)."""
    text = type(e).__name__ + ("(%r)" % (e.args[0],) if len(e.args) == 1 else repr(e.args))
    assert sys.version_info < (3, 7) or text == repr(e), (text, repr(e))
    return text


def expect(value, how="exact", text=None):
    return {"how": how, "text": repr(value) if text is None else text}


def record(me, stack):
    TRUTH.thread(tid=gettid(), name=me.name, role="worker", stack=stack)
    READY.set()


def park(depth, captured_copy):
    inner_local = captured_copy + "!"
    me = threading.current_thread()
    TRUTH.data["frames"] = [
        {"function": "park", "locals": [
            ("depth", "argument", expect(depth)),
            ("captured_copy", "argument", expect(captured_copy)),
            ("inner_local", "local", expect(inner_local)),
            ("me", "local", {"how": "thread", "text": "<threading.Thread %r" % me.name,
                             "suffix": " at 0x%x>" % id(me)}),
        ]},
    ] + TRUTH.data["frames"]
    # One line: the recorded line is the line the thread sleeps on.
    while True: record(me, python_stack(1)); time.sleep(3600)  # noqa: E701,E702


def settle(count, name, *rest, **options):
    nothing = None
    flag = True
    big = -(2 ** 100)
    ratio = 0.1
    narrow = "h\u00e9llo \u4e2d"
    wide = "\U0001F600 smile"
    data = b"\x00\x01abc" * 20
    items = [1, "two", (3,)]
    pairs = {"a": 1, "b": [2, 3]}
    members = {42}
    frozen = frozenset()
    many = list(range(100))
    lock = threading.Lock()
    lock.acquire()
    rlock = threading.RLock()
    rlock.acquire()
    rlock.acquire()
    acquire = lock.acquire
    widget = Widget()
    point = Point(42, "x")
    nested_point = Point(Point(1, "inner"), "outer")
    dict_point = Point(7, "y")
    vars(dict_point)  # 3.11+: its attributes move from values kept with the object to a dict object
    slotted = Slotted()
    slotted.a = 1
    node = Node()
    node.me = node
    error = RuntimeError("I am an error")
    os_error = OSError(2, "No such file")
    no_args = KeyError()
    mine = MyError("boom", 3)
    huge_error = ValueError(*range(50))
    try:
        {}["missing"]
    except KeyError as e:
        caught = e
    stack = Stack([1, 2])
    registry = Registry(a=1)
    captured = "cell value"

    def nested(depth):
        return park(depth, captured)

    TRUTH.data["frames"] = [
        {"function": "settle.<locals>.nested", "locals": [
            ("depth", "argument", expect(depth_of_nested)),
            ("captured", "free", expect(captured)),
        ]},
        {"function": "settle", "locals": [
            ("count", "argument", expect(count)),
            ("name", "argument", expect(name)),
            ("rest", "argument", expect(rest)),
            ("options", "argument", expect(options)),
            ("nothing", "local", expect(nothing)),
            ("flag", "local", expect(flag)),
            ("big", "local", expect(big)),
            ("ratio", "local", expect(ratio)),
            ("narrow", "local", expect(narrow)),
            ("wide", "local", expect(wide)),
            ("data", "local", expect(data[:64], "prefix")),
            ("items", "local", expect(items)),
            ("pairs", "local", expect(pairs)),
            ("members", "local", expect(members)),
            ("frozen", "local", expect(frozen)),
            ("many", "local", expect(many[:10], "prefix", repr(many[:10])[:-1])),
            ("lock", "local", expect(None, text="<threading.Lock at 0x%x locked>" % id(lock))),
            ("rlock", "local", expect(None, text="<threading.RLock at 0x%x owned by LWP %d (count 2)>"
                                      % (id(rlock), gettid()))),
            ("acquire", "local", expect(acquire)),
            ("widget", "local", expect(None, text="<Widget at remote 0x%x>" % id(widget))),
            ("point", "local", expect(None, text=instance_text(point, ["an_int", "name"]))),
            ("nested_point", "local", expect(None, text=instance_text(nested_point, ["an_int", "name"]))),
            ("dict_point", "local", expect(None, text=instance_text(dict_point, ["an_int", "name"]))),
            ("slotted", "local", expect(None, text="<Slotted(a=1) at remote 0x%x>" % id(slotted))),
            ("node", "local", expect(None, text=instance_text(node, ["me"]))),
            ("error", "local", expect(None, text=exception_text(error))),
            ("os_error", "local", expect(None, text=exception_text(os_error))),
            ("no_args", "local", expect(None, text=exception_text(no_args))),
            ("mine", "local", expect(None, text=exception_text(mine))),
            ("huge_error", "local", expect(None, "prefix", exception_text(ValueError(*range(10)))[:-1] + ", ...(50 items)")),
            ("caught", "local", expect(None, text=exception_text(caught))),
            ("stack", "local", expect(None, text="Stack(%r)" % (stack,))),
            ("registry", "local", expect(None, text="Registry(%r)" % (registry,))),
            ("nested", "local", expect(None, text="<function %s at 0x%x>" % (nested.__qualname__, id(nested)))),
            ("captured", "cell", expect(captured)),
        ], "unbound": ["later"]},
    ]
    nested(depth_of_nested)
    later = 1
    return later


depth_of_nested = 7


def worker():
    set_os_thread_name("locals-worker")
    settle(5, "invoice", "extra", 2.5, retry=True)


def main():
    set_os_thread_name("locals-main")
    threading.Thread(target=worker, name="locals-worker", daemon=True).start()
    READY.wait()
    TRUTH.data["globals"] = [("CONFIG", expect(CONFIG)), ("depth_of_nested", expect(depth_of_nested))]
    TRUTH.thread(tid=gettid(), name="MainThread", role="main", stack=python_stack(1))
    TRUTH.write_and_signal_ready()
    while True: time.sleep(3600)  # noqa: E701


main()

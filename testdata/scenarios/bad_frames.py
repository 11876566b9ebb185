"""Scenario: a live process whose own frame data is damaged, as a stray
write in a C extension would damage it.  The program damages itself, with
ctypes, after recording the truth; pyhang only reads.

- Thread "broken-chain" sleeps in inner(), called by middle(), called by
  outer().  The code pointer of middle()'s frame is then pointed at an
  unmapped page.  pyhang must show middle() as one unknown frame, name the
  bad address, and still walk outer() and the older frames.
- Thread "broken-name" sleeps in nameless(), whose code object's name
  pointer (co_qualname on 3.11+, co_name before) is pointed at an unmapped
  page.  pyhang must name the string's address, not the code object's.

Where the pointers live (CPython's Include/frameobject.h up to 3.10 and
Include/internal/pycore_frame.h from 3.11): up to 3.10 the code pointer is a
field of the PyFrameObject; from 3.11 it is in the _PyInterpreterFrame that
PyFrameObject.f_frame (the third word) points to.  Rather than hard-coding
field offsets, the program looks for the word that holds id(code) in the
first words of the structure, and for id(name) in the code object.

Garbage collection is disabled first: a collection would follow the damaged
pointers.  Nothing in the program touches the damaged frames again.
"""
import ctypes
import gc
import mmap
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402

TRUTH = Truth()
INTERPRETER_FRAME_WORDS = 8  # 3.11+: the code pointer is the first or the fifth word


def unmapped_address():
    """An address nothing is mapped at, for as long as the program runs: the
    middle page of three mapped, unmapped alone.  A one-page hole between
    two mappings is too small for what a process maps later (allocator
    arenas, thread stacks), which would otherwise reuse a freed page's
    address and make it readable again."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    pages = libc.mmap(None, 3 * mmap.PAGESIZE, mmap.PROT_READ, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    assert pages not in (None, ctypes.c_void_p(-1).value)
    assert libc.munmap(pages + mmap.PAGESIZE, mmap.PAGESIZE) == 0
    return pages + mmap.PAGESIZE + 0x40


def words(address, count):
    return (ctypes.c_uint64 * count).from_address(address)


def overwrite(address, count, old, new):
    """Replace every word equal to `old` among the `count` words at `address`."""
    w = words(address, count)
    hits = [i for i in range(count) if w[i] == old]
    assert hits, "no word at 0x%x holds 0x%x" % (address, old)
    for i in hits:
        w[i] = new


def code_slot_holder(frame):
    """The structure whose word is the frame's code pointer, and its size in words."""
    if sys.version_info >= (3, 11):
        # PyFrameObject: refcnt, type, f_back, f_frame
        return words(id(frame), 4)[3], INTERPRETER_FRAME_WORDS
    return id(frame), type(frame).__basicsize__ // 8


def record(role, stack, **extra):
    me = threading.current_thread()
    # parked_in: the harness waits for the sleep itself, not a wait inside ready.set() on the way to it
    TRUTH.thread(tid=gettid(), name=me.name, role=role, stack=stack,
                 parked_in=["clock_nanosleep", "select", "pselect6"], **extra)


def damage_caller_of_caller(ready):
    """Records the caller's stack, then damages the frame that called the caller."""
    stack = python_stack(2)
    middle_frame = sys._getframe(2)
    bad = unmapped_address()
    holder, count = code_slot_holder(middle_frame)
    # The recorded stack: middle() is the one frame nobody can name.
    stack[1] = {"function": "<unknown>", "file": "<unknown>", "line": -1}
    record("broken-chain", stack, unknown_index=1, bad_code=bad)
    overwrite(holder, count, id(middle_frame.f_code), bad)
    del middle_frame
    ready.set()


def inner(ready):
    # One line: the recorded line is the line the thread sleeps on.
    damage_caller_of_caller(ready); time.sleep(1 << 30)  # noqa: E702


def middle(ready):
    inner(ready)


def outer(ready):
    set_os_thread_name("broken-chain")
    middle(ready)


def damage_own_name(code, ready):
    name = code.co_qualname if sys.version_info >= (3, 11) else code.co_name
    bad = unmapped_address()
    record("broken-name", python_stack(2), code=id(code), bad_name=bad)
    overwrite(id(code), type(code).__basicsize__ // 8, id(name), bad)
    ready.set()


def nameless(ready):
    set_os_thread_name("broken-name")
    # One line: the recorded line is the line the thread sleeps on.
    damage_own_name(sys._getframe(0).f_code, ready); time.sleep(1 << 30)  # noqa: E702


def main():
    gc.disable()
    events = []
    for name, target in (("broken-chain", outer), ("broken-name", nameless)):
        ready = threading.Event()
        threading.Thread(target=target, args=(ready,), name=name, daemon=True).start()
        events.append(ready)
    for ready in events:
        ready.wait()
    TRUTH.thread(tid=gettid(), name="MainThread", role="main", stack=None)
    TRUTH.write_and_signal_ready()
    while True: time.sleep(3600)  # noqa: E701


main()

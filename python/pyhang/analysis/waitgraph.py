"""The wait-for graph of one process: every deadlock cycle in its edges,
and the driver-lock heuristic that adds likely edges where a lock records
no owner.

Edges come from every decoder (lock words, the GIL state, Python RLock
owners) and from the heuristics (this module's likely_holders, and
deadlocks.python_lock_holders); a cycle that needs a heuristic edge is
"likely", never "certain".  Plain Python over the report model: no gdb, no
target, no compiled module, so that a saved snapshot can be analysed
anywhere.  The heuristic records what it found as data (Edge.facts); the
sentence is pyhang.render.locks.likely_holder_evidence's.
"""
from pyhang.libraries import (PYTHON_RUNTIME_LIBRARIES, is_driver_helper_thread, is_driver_library, is_one_of,
                              is_system_library)
from pyhang.model.kinds import Confidence, GilState, OwnerSource, WaitKind
from pyhang.model.report import Deadlock, Edge

MAX_CYCLES = 1000        # cycles listed (docs/json-contract.md: "at most 1000")
# Steps of the cycle search from one thread before it gives up: a sane
# wait-for graph has a handful of edges per thread; this bounds a
# pathological one.
MAX_STEPS = 1000000

# Locks that may record no owner: a read-held rwlock, a bare futex word, a
# mutex whose owner field is not set.
_UNRECORDED_OWNER_KINDS = (WaitKind.RWLOCK, WaitKind.RWLOCK_READ, WaitKind.RWLOCK_WRITE, WaitKind.FUTEX,
                           WaitKind.MUTEX)
# Where native code enters Python: ctypes/cffi callbacks and the C API a
# C thread takes the GIL with.
_CALLBACK_FUNCTIONS = ("PyGILState_Ensure", "_CallPythonObject", "closure_fcn")
_CALLBACK_PREFIXES = ("_ctypes_callproc",)


def _is_heuristic(e):
    return e.source == OwnerSource.HEURISTIC


def _search(out, start, limit):
    """(cycles through `start` whose other threads all have larger TIDs,
    truncated): a depth-first search without recursion (a chain of waits
    may be longer than Python's recursion limit).  One cycle per next
    thread however many edges lead there; bounded by MAX_STEPS entries
    into a thread and by `limit` cycles (checked when a thread is
    entered)."""
    found, path, on_path = [], [start], {start}
    steps, truncated, stack = 0, False, []

    def enter(node):
        nonlocal steps, truncated
        if truncated:
            return False
        steps += 1
        if steps > MAX_STEPS or len(found) >= limit:
            truncated = True
            return False
        stack.append((node, iter(out.get(node, ())), set()))
        return True

    enter(start)
    while stack:   # bounded: enter() pushes at most MAX_STEPS frames
        node, edges, seen_next = stack[-1]
        for e in edges:
            nxt = e.owner
            if nxt in seen_next:
                continue   # parallel edges: one cycle
            seen_next.add(nxt)
            if nxt == start:
                found.append(list(path))
            elif nxt > start and nxt not in on_path:
                path.append(nxt)
                on_path.add(nxt)
                if enter(nxt):
                    break      # go deeper; this thread's edges resume when that one is done
                path.pop()
                on_path.discard(nxt)
        else:
            stack.pop()
            if stack:          # leave `node`, back to the thread that led to it
                path.pop()
                on_path.discard(node)
    return found, truncated


def find_cycles(edges, max_cycles=MAX_CYCLES):
    """([Deadlock], truncated): every elementary cycle of the graph, each
    found once (from its smallest TID, visiting only larger ones) and
    starting there, in the order of the threads; truncated when the search
    stopped at `max_cycles` or at its step bound.  Between the same two
    threads a certain edge is preferred to a heuristic one, so a cycle is
    "likely" only when it cannot be closed without a guess."""
    out = {}
    for e in edges:
        out.setdefault(e.waiter, []).append(e)
    for waiter in out:   # certain first (a stable sort keeps the order of the rest)
        out[waiter].sort(key=_is_heuristic)
    nodes = sorted({e.waiter for e in edges} | {e.owner for e in edges})
    deadlocks, truncated = [], False
    for start in nodes:
        found, stopped = _search(out, start, max_cycles - len(deadlocks))
        for threads in found:
            cycle = [next(e for e in out[a] if e.owner == b) for a, b in zip(threads, threads[1:] + threads[:1])]
            sure = not any(_is_heuristic(e) for e in cycle)
            deadlocks.append(Deadlock(threads=threads, edges=cycle,
                                      confidence=Confidence.CERTAIN if sure else Confidence.LIKELY))
        if stopped:
            truncated = True
            break
    return deadlocks, truncated


def lock_library(frames):
    """The library whose code took the lock a thread waits on: that of its
    first frame, from the top, outside the C library (whose lock functions
    every waiter calls); None when no frame names one."""
    return next((f.library for f in frames if f.library and not is_system_library(f.library)), None)


def is_python_runtime(path):
    """The interpreter or its FFI modules: their locks are Python's, not a driver's."""
    return is_one_of(path, PYTHON_RUNTIME_LIBRARIES)


def _is_callback(function):
    return bool(function) and (function in _CALLBACK_FUNCTIONS or function.startswith(_CALLBACK_PREFIXES))


def _blocked_kind(th):
    return (th.blocked_on.kind if th.blocked_on is not None else None) or ""


def _inside(th, library):
    """The facts that make `th` a suspect for a lock taken inside `library`,
    or None when none of its frames is there."""
    frames = th.native_frames
    at = next((i for i, f in enumerate(frames) if f.library == library), None)
    if at is None:
        return None
    call = next((i for i, f in enumerate(frames) if _is_callback(f.function)), None)
    waits_for_gil = th.gil == GilState.WAITING
    # A callback below the library's frame: the thread entered Python from inside the library.
    callback = {"function": frames[call].function, "frame": call} if waits_for_gil and call is not None \
        and call < at else None
    return {"library": library, "library_frame": at, "driver_library": is_driver_library(library),
            "waits_for_gil": waits_for_gil, "callback": callback, "blocked_kind": _blocked_kind(th)}


def owner_unrecorded(b):
    """Whether a wait (a ThreadReport's blocked_on, or None) is on a native
    lock that records no owner: what the driver-lock heuristic explains."""
    return b is not None and not b.owners and b.kind in _UNRECORDED_OWNER_KINDS


def likely_holders(threads):
    """Heuristic edges (source "heuristic", with their facts) for each
    blocked thread whose lock records no owner (a read-held rwlock, a lock
    without an owner field) below a library that is not Python's: the
    other threads that are inside the same library (by frame) and blocked
    elsewhere.  When some of them wait for the GIL, only those: above all
    one that entered Python from inside that library (a ctypes/cffi
    callback, PyGILState_Ensure below the library's frames) and has not
    left it.  Driver helper threads are never waiters nor suspects: they
    sleep on their driver's internal words by design."""
    edges = []
    for waiter in threads:
        b = waiter.blocked_on
        if not owner_unrecorded(b) or is_driver_helper_thread(waiter.name):
            continue
        library = lock_library(waiter.native_frames)
        if library is None or is_python_runtime(library):
            continue
        strong, weak = [], []
        for t in threads:
            if t.tid == waiter.tid or not _blocked_kind(t) or is_driver_helper_thread(t.name):
                continue
            facts = _inside(t, library)
            if facts is not None:
                (strong if facts["waits_for_gil"] else weak).append((t.tid, facts))
        for owner, facts in strong or weak:
            edges.append(Edge(waiter=waiter.tid, owner=owner, kind=b.kind, address=b.address,
                              source=OwnerSource.HEURISTIC, facts=facts))
    return edges

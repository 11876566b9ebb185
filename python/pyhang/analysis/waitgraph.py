"""The wait-for graph of one process: every deadlock cycle in its edges,
and the driver-lock heuristic that adds likely edges where a lock records
no owner.

Edges come from every decoder (lock words, the GIL state, Python RLock
owners) and from the heuristics (this module's likely_holders, and
deadlocks.python_lock_holders); a cycle that needs a heuristic edge is
"likely", never "certain".  Plain Python over the report model: no gdb, no
target, no compiled module, so that a saved snapshot can be analysed
anywhere.  The heuristic records what it found as data (Edge.facts: a
model.edge_facts.DriverLockFacts); the sentence is
pyhang.render.locks.likely_holder_evidence's.
"""
import time

from pyhang.libraries import (PYTHON_RUNTIME_LIBRARIES, is_driver_helper_thread, is_driver_library, is_one_of,
                              is_system_library)
from pyhang.model.kinds import Confidence, GilState, OwnerSource, WaitKind
from pyhang.model.edge_facts import DriverLockFacts, LibraryCallback
from pyhang.model.report import Deadlock, Edge

MAX_CYCLES = 1000        # cycles listed (docs/json-contract.md: "at most 1000")
# Steps of the cycle search from one thread before it gives up: a sane
# wait-for graph has a handful of edges per thread; this bounds a
# pathological one.
MAX_STEPS = 1000000
# Seconds the cycle search may take on any graph before it stops (a warning then says so).
MAX_SECONDS = 5.0

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


class _Budget:
    """The bounds of one cycle search: MAX_STEPS from each start (each
    thread entered and each edge looked at is a step) and MAX_SECONDS of
    time for all of them."""

    def __init__(self):
        self.steps = 0
        self.deadline = time.monotonic() + MAX_SECONDS
        self.spent = False

    def step(self):
        self.steps += 1
        if self.steps > MAX_STEPS or (self.steps & 1023 == 0 and time.monotonic() > self.deadline):
            self.spent = True
        return not self.spent


def _search(out, start, limit, budget=None):
    """(cycles through `start` whose other threads all have larger TIDs,
    truncated): a depth-first search without recursion (a chain of waits
    may be longer than Python's recursion limit).  One cycle per next
    thread however many edges lead there; bounded by `budget` (a _Budget:
    steps and time) and by `limit` cycles (checked when a thread is
    entered)."""
    budget = budget or _Budget()
    budget.steps = 0
    found, path, on_path = [], [start], {start}
    truncated, stack = False, []

    def enter(node):
        nonlocal truncated
        if truncated:
            return False
        if not budget.step() or len(found) >= limit:
            truncated = True
            return False
        stack.append((node, iter(out.get(node, ())), set()))
        return True

    enter(start)
    while stack and not truncated:   # bounded: every edge looked at is a step of the budget
        node, edges, seen_next = stack[-1]
        for e in edges:
            if not budget.step():
                truncated = True
                break
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


def strong_components(nodes, succ):
    """The strongly connected components of the graph `succ` ({node: [node]}) over `nodes` (Tarjan's,
    without recursion), each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(succ.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in nodes:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(succ.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                out.append(sorted(comp))
    return out


def components(out):
    """The strongly connected components of the graph `out` ({waiter:
    [Edge]}) that can hold a cycle (two threads or more, or one waiting on
    itself), each a sorted list of TIDs, in the order of their smallest."""
    succ = {n: [e.owner for e in edges] for n, edges in out.items()}
    nodes = set(succ) | {o for owners in succ.values() for o in owners}
    return sorted(c for c in strong_components(nodes, succ) if len(c) > 1 or c[0] in succ.get(c[0], ()))


def find_cycles(edges, max_cycles=MAX_CYCLES):
    """([Deadlock], truncated): the cycles of the graph, found within its
    strongly connected components.  Each cycle that closes through edges
    read from memory alone ("certain") is listed, found once (from its
    smallest TID, visiting only larger ones) and starting there.  Cycles
    that need a guessed edge ("likely") are listed one by one only where
    their component has one; a component with more is one deadlock, its
    shortest such cycle with `component` facts: its threads and how many
    cycles run through them (guesses that make hundreds of elementary
    cycles are one finding, not hundreds).  Between the same two threads a
    certain edge is preferred to a heuristic one.  truncated: the search
    stopped at `max_cycles`, at its steps or at its time (_Budget) before
    every certain cycle was found."""
    out = {}
    for e in edges:
        out.setdefault(e.waiter, []).append(e)
    for waiter in out:   # certain first (a stable sort keeps the order of the rest)
        out[waiter].sort(key=_is_heuristic)
    deadlocks, truncated, budget = [], False, _Budget()
    for members in components(out):
        inside = set(members)
        local = {n: [e for e in out.get(n, ()) if e.owner in inside] for n in members}
        first = {}   # (waiter, owner) → the edge a cycle takes between them: the first, certain ones sorted first
        for n in members:
            for e in local[n]:
                first.setdefault((n, e.owner), e)
        sure, guessed, stopped = [], [], False
        for start in members:
            found, stopped = _search(local, start, max_cycles - len(deadlocks) - len(sure) - len(guessed), budget)
            for threads in found:
                cycle = [first[a, b] for a, b in zip(threads, threads[1:] + threads[:1])]
                (guessed if any(_is_heuristic(e) for e in cycle) else sure).append((threads, cycle))
            if stopped:
                break
        deadlocks += [Deadlock(threads=t, edges=c, confidence=Confidence.CERTAIN) for t, c in sure]
        if len(guessed) == 1 and not stopped:
            deadlocks += [Deadlock(threads=t, edges=c, confidence=Confidence.LIKELY) for t, c in guessed]
        elif guessed:
            threads, cycle = min(guessed, key=lambda g: len(g[0]))
            deadlocks.append(Deadlock(threads=threads, edges=cycle, confidence=Confidence.LIKELY,
                                      component={"threads": members, "cycles": len(guessed),
                                                 "all_counted": not stopped,
                                                 "guessed_edges": sum(1 for n in members for e in local[n]
                                                                      if _is_heuristic(e))}))
        if stopped and (sure or budget.spent):
            truncated = True
        if budget.spent or len(deadlocks) >= max_cycles:
            truncated = truncated or budget.spent or stopped
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
    callback = LibraryCallback(frames[call].function, call) if waits_for_gil and call is not None \
        and call < at else None
    return DriverLockFacts(library=library, library_frame=at, driver_library=is_driver_library(library),
                           waits_for_gil=waits_for_gil, callback=callback, blocked_kind=_blocked_kind(th))


def owner_unrecorded(b):
    """Whether a wait (a ThreadReport's blocked_on, or None) is on a native
    lock that records no owner: what the driver-lock heuristic explains."""
    return b is not None and not b.owners and b.kind in _UNRECORDED_OWNER_KINDS


def _wait_site_library(th):
    """The library of the first frame of `th`, from the top, outside the C
    library: the code that made its own wait (lock_library), or None."""
    return lock_library(th.native_frames)


def fellow_waiter(th, library):
    """Whether `th` is itself waiting, from inside `library`, on a native
    lock that records no owner: its being inside `library` is its own wait,
    no evidence that it holds another lock there (a pool of threads parked
    in one library's wait, gRPC's in absl's per-thread semaphore, would
    otherwise each guess all the others).  A gRPC call (its poll, or gRPC's wait while another thread polls)
    waits there for its server, as such a waiter does."""
    grpc_call = th.blocked_on is not None and th.blocked_on.kind == WaitKind.GRPC_CALL
    return (owner_unrecorded(th.blocked_on) or grpc_call) and _wait_site_library(th) == library


def likely_holders(threads):
    """Heuristic edges (source "heuristic", with their facts) for each
    blocked thread whose lock records no owner (a read-held rwlock, a lock
    without an owner field) below a library that is not Python's: the
    other threads that are inside the same library (by frame) and blocked
    elsewhere.  When some of them wait for the GIL, only those: above all
    one that entered Python from inside that library (a ctypes/cffi
    callback, PyGILState_Ensure below the library's frames) and has not
    left it.  Being in the library is no evidence by itself: a thread that
    waits there on a lock that records no owner, as the waiter does
    (fellow_waiter), is never a suspect.  Driver helper threads are never
    waiters nor suspects: they sleep on their driver's internal words by
    design."""
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
            if facts is None:
                continue
            if facts.waits_for_gil:
                strong.append((t.tid, facts))
            elif not fellow_waiter(t, library):
                weak.append((t.tid, facts))
        for owner, facts in strong or weak:
            edges.append(Edge(waiter=waiter.tid, owner=owner, kind=b.kind, address=b.address,
                              source=OwnerSource.HEURISTIC, facts=facts))
    return edges

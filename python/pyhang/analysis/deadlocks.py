"""Wait-for edges from the analysed threads, the deadlocks found in them,
and verdicts for blocked processes without a cycle.

The cycle search and the driver-lock heuristic are pyhang.analysis.waitgraph;
this module gathers the edges it searches and states what a blocked process
without a cycle suffers from.
"""
from pyhang.analysis import collectives, grpc_calls, held, idle, python_api, syscalls, waitgraph
from pyhang.model.kinds import Confidence, GilState, OwnerSource, TargetWarning, VerdictKind, WaitKind
from pyhang.model.record import replace
from pyhang.model.report import Edge, Verdict
from pyhang.model.edge_facts import BarrierPartyFacts, DatabaseFacts, LockSelfFacts, LockSuspectFacts, LoopSelfFacts, \
    PgBackend, PoolCheckoutFacts, ReachesObjectFacts, ReachesQueueFacts, SqliteHoldersFacts, signal_handler
from pyhang.model.verdict_facts import ExecutorStarvationFacts, NothingCanWakeFacts, OwnerGoneFacts, \
    OwnersUnknownFacts, PoolIdleFacts, PoolWorker, UnknownOwnerWait, WaitsOnProcessFacts
from pyhang.model.waits import syscall_of
from pyhang.model.files import pg_backend
from pyhang.analysis.gather import PG_CONNECTIONS
from pyhang.libraries import NATIVE_IDLE_LOOPS, POOL_LIBRARIES, POOL_WAIT_LIBRARIES, is_one_of, is_system_library


def _owner_gone(b):
    """Whether the Python lock `b` waits on records a holder that is no thread here (locks.settle)."""
    return b is not None and b.python is not None and b.python.owner_gone


# Waits whose recorded owner may be the waiter itself: a mutex or rwlock the thread already holds (a second
# lock of a normal mutex, a write lock taken under its own read lock) never returns.  A thread waiting for the
# GIL or joining cannot be its own owner: such a record is a moment's or a misread, no cycle.
SELF_WAIT_KINDS = (WaitKind.MUTEX, WaitKind.RWLOCK, WaitKind.RWLOCK_READ, WaitKind.RWLOCK_WRITE)


def certain_edges(threads):
    """One edge per (waiter, owner) the decoders know for sure; a lock
    whose owner word names its own waiter is an edge to itself (a
    one-thread cycle: SELF_WAIT_KINDS)."""
    edges = []
    for th in threads:
        b = th.blocked_on
        if b is None:
            continue
        loop_self = b.kind == WaitKind.PY_FUTURE and b.owner_source == OwnerSource.ASYNCIO_LOOP
        for owner in b.owners:
            if owner != th.tid or b.kind in SELF_WAIT_KINDS or loop_self:
                # (a Future only the waiter's own event loop completes: a loop blocked by its own thread's wait)
                edges.append(Edge(waiter=th.tid, owner=owner, kind=b.kind, address=b.address,
                                  source=b.owner_source, evidence=b.evidence,
                                  facts=LoopSelfFacts(loop=b.api.asyncio.get("loop"))
                                  if owner == th.tid and loop_self else None))
    return edges


def python_lock_holders(threads):
    """Likely holders of the threading.Locks threads wait on, which record
    no owner: the other threads that reference the lock object in their
    innermost Python frames (the native Python-lock search's `suspects`),
    unless the lock is free or they wait for it too.  When no other thread
    is such a holder and an outer frame of the waiter itself references the
    lock (`self_frames`: inside `with lock:` there, or holding it after
    acquire()), the waiter is its likely holder: a Lock is not re-entrant,
    so it waits for itself (an edge to itself, facts "self")."""
    waits = {t.tid: (t.blocked_on.kind, t.blocked_on.address) for t in threads if t.blocked_on}
    edges = []
    for th in threads:
        b = th.blocked_on
        if b is None or b.kind != WaitKind.PY_LOCK or b.owners or b.python is None or b.python.locked is False:
            continue
        sites = b.python.suspect_frames
        found = []
        for i, suspect in enumerate(b.python.suspects):
            if suspect != th.tid and waits.get(suspect) != (b.kind, b.address):
                found.append(Edge(waiter=th.tid, owner=suspect, kind=b.kind, address=b.address,
                                  source=OwnerSource.HEURISTIC,
                                  facts=LockSuspectFacts(references=sites[i] if i < len(sites) else None)))
        if not found and b.python.self_frames:
            found.append(Edge(waiter=th.tid, owner=th.tid, kind=b.kind, address=b.address,
                              source=OwnerSource.HEURISTIC,
                              facts=_lock_self(b, th)))
        edges += found
    return edges


def _lock_self(b, th):
    """The facts of a Lock its waiter `th` holds itself (wait `b`), with the signal handler it waits in."""
    handler, interrupted = signal_handler(th.python_frames) or (None, None)
    return LockSelfFacts(references=b.python.self_frames[0], waits_in=getattr(b.evidence, "frame", None),
                         handler=handler, interrupted=interrupted)


def needs_deeper_frames(threads):
    """Whether some thread waits on a native lock that records no owner
    below a library that is not the system's: the likely-holder heuristics
    then need to see deeper into blocked threads.  `threads` have
    `blocked_on` and `native_frames`."""
    for th in threads:
        if not waitgraph.owner_unrecorded(th.blocked_on):
            continue
        if any(f.library and not is_system_library(f.library) for f in th.native_frames):
            return True
    return False


def sqlite_holders(threads, snapshots):
    """Likely holders of the database lock a thread in SQLite's busy handler
    waits for: the other threads whose Python frames hold a
    sqlite3.Connection (ThreadSnapshot.connections), one of which has the
    open transaction.  Never certain: which one holds the lock is not read."""
    holding = {s.tid: [c for c in s.connections if c.type in (None, "sqlite3.Connection")]
               for s in snapshots if s.connections}
    holding = {tid: c for tid, c in holding.items() if c}
    edges = []
    for th in threads:
        b = th.blocked_on
        if b is None or b.kind != WaitKind.SQLITE_BUSY or b.owners:
            continue
        for tid, connections in sorted(holding.items()):
            if tid != th.tid:
                edges.append(Edge(waiter=th.tid, owner=tid, kind=b.kind, address=None, source=OwnerSource.HEURISTIC,
                                  facts=SqliteHoldersFacts(connections=connections)))
    return edges


def _socket_objects(b):
    """The FdObjects of the sockets a system-call wait (a BlockedOn) is on: its fd's, or those a poll watches."""
    s = syscall_of(b)
    objects = [s.object] if s.object is not None else [w["object"] for w in s.fds or () if w.get("object")]
    return [o for o in objects if o is not None and o.kind == "socket"]


def _waiting_backend(b):
    """(holder, sessions) of the PostgreSQL backend at the other end of the wait `b` whose title says it waits
    (for a lock: `UPDATE waiting`), with this process's sessions with that server; or None."""
    for obj in _socket_objects(b):
        for h in obj.holders or ():
            backend = pg_backend(h.title)
            if backend is not None and backend[2].endswith(" waiting"):
                return h, list(h.sessions or ())
    return None


def database_holders(threads, snapshots):
    """Likely edges through a PostgreSQL server: a thread whose query waits in the server (its backend's
    title says `... waiting`: for a lock another session holds) waits on the other threads whose innermost
    Python frames hold a PostgreSQL connection whose backend is a session `idle in transaction` of this
    process (an open transaction that holds its locks until the program commits it), matched by the backend's
    PID its connection holds (_by_backend; psycopg2's connection.status, inside a transaction, said as
    corroboration); where no connection's backend could be read, those holding one inside a transaction
    (connection.status; where not read either, any connection: _in_transaction), never a thread whose every
    connection's backend is known to be another.  And a thread
    holding such a connection that waits on a threading.Event or Condition another thread reaches from its
    frames (a likely setter) waits on that thread.  Never certain: the server's lock graph is not read."""
    conns = {s.tid: [c for c in s.connections or () if c.type in PG_CONNECTIONS] for s in snapshots}
    conns = {tid: c for tid, c in conns.items() if c}
    edges, waiting = [], set()
    for th in threads:
        found = _waiting_backend(th.blocked_on) if th.blocked_on is not None and \
            th.blocked_on.kind == WaitKind.SYSCALL else None
        if found is None:
            continue
        backend, sessions = found
        open_tx = [x for x in sessions if x.state.startswith("idle in transaction")]
        if not open_tx:
            continue
        waiting.add(th.tid)
        others = [tid for tid in sorted(conns) if tid != th.tid]
        matched = _by_backend(others, conns, {x.pid: x for x in open_tx})
        # a thread whose own recorded wait is on this one (it joins it) is explained by that wait: a suspect only
        # when no other thread holds a connection
        suspects = sorted(matched) if matched else _in_transaction(
            [tid for tid in others if not _backends_known(conns[tid])], conns)
        for tid in _unblocked_first(threads, th.tid, suspects):
            held = conns[tid]
            facts = DatabaseFacts(database=PgBackend(backend.pid, backend.title), connections=held,
                                  open_transactions=open_tx)
            if tid in matched:
                # the owner's own session, by its connection's backend PID: the socket peer that holds the locks
                facts.backend = matched[tid]
                facts.status_agrees = any(c.status in PG_IN_TRANSACTION for c in held
                                          if c.backend_pid == matched[tid].pid)
            edges.append(Edge(waiter=th.tid, owner=tid, kind=th.blocked_on.kind, address=None,
                              source=OwnerSource.HEURISTIC, facts=facts))
    holders = {e.owner for e in edges}
    for th in threads:
        b = th.blocked_on
        api = b.api if b is not None else None
        if th.tid not in holders or b.kind not in (WaitKind.PY_EVENT, WaitKind.PY_CONDITION) or api is None or \
                not api.referenced_by:
            continue
        for tid in api.referenced_by:
            if tid != th.tid and tid in waiting:
                edges.append(Edge(waiter=th.tid, owner=tid, kind=b.kind, address=b.address,
                                  source=OwnerSource.HEURISTIC, facts=ReachesObjectFacts()))
    return edges


# psycopg2's connection.status of a connection inside a transaction (STATUS_BEGIN, STATUS_PREPARED)
PG_IN_TRANSACTION = (2, 5)


def _backends_known(connections):
    """Whether the backend of every one of `connections` is known (gather._add_pg_backends)."""
    return all(c.backend_pid for c in connections)


def _by_backend(tids, conns, open_tx):
    """{tid: session} of the threads of `tids` holding a connection whose backend (its PGconn's backend PID:
    gather._add_pg_backends) is one of `open_tx` ({pid: session} of the sessions `idle in transaction`): the
    sessions that hold a transaction's locks, matched to their threads by the socket's other end."""
    out = {}
    for tid in tids:
        for c in conns[tid]:
            if c.backend_pid in open_tx:
                out[tid] = open_tx[c.backend_pid]
                break
    return out


def _in_transaction(tids, conns):
    """Of `tids` (threads holding PostgreSQL connections: `conns`, {tid: [connection]}), those holding a
    connection inside a transaction (its `status`: gather._add_pg_status), the only sessions that hold a
    transaction's locks; where none is known to be, those holding one whose status was not read; never a thread
    whose every connection is known to be outside a transaction."""
    def states(tid):
        return {c.status in PG_IN_TRANSACTION if c.status is not None else None for c in conns[tid]}
    inside = [tid for tid in tids if True in states(tid)]
    return inside or [tid for tid in tids if None in states(tid)]


def _unblocked_first(threads, waiter, suspects):
    """`suspects` (TIDs) without those whose recorded wait is on `waiter` or another suspect (a joiner waits
    for them: explained by that wait), unless that leaves none."""
    by_tid = {t.tid: t for t in threads}
    among = set(suspects) | {waiter}

    def waits_among(tid):
        b = by_tid[tid].blocked_on if tid in by_tid else None
        return b is not None and bool(among.intersection(o for o in b.owners if o != tid))
    free = [tid for tid in suspects if not waits_among(tid)]
    return free or list(suspects)


def pool_holders(threads, snapshots):
    """Likely edges from a thread waiting in a connection pool's checkout (ThreadSnapshot.pool_checkout: a
    SQLAlchemy QueuePool, a urllib3 pool with block=True) to the threads whose frames hold one of that pool's
    connections (ThreadSnapshot.connections with its `pool`): the pool fills again only when they return
    them."""
    checkouts = {s.tid: s.pool_checkout for s in snapshots if s.pool_checkout}
    held = {}
    for s in snapshots:
        for c in s.connections or ():
            if c.pool:
                held.setdefault(c.pool, {}).setdefault(s.tid, []).append(c)
    by_tid = {t.tid: t for t in threads}
    edges = []
    for tid, checkout in sorted(checkouts.items()):
        t = by_tid.get(tid)
        if t is None or t.blocked_on is None:
            continue
        holders = {h: c for h, c in held.get(checkout.pool, {}).items() if h != tid}
        for owner in sorted(holders):
            edges.append(Edge(waiter=tid, owner=owner, kind=t.blocked_on.kind, address=t.blocked_on.address,
                              source=OwnerSource.HEURISTIC,
                              facts=PoolCheckoutFacts(pool=checkout, connections=holders[owner])))
    return edges


def barrier_parties(threads):
    """Likely edges from the threads waiting at a threading.Barrier to the threads that reach it from their
    frames and do not wait at it: the parties that have not arrived (a thread whose own recorded wait is on
    another of them comes after it: _unblocked_first)."""
    at = {}
    for t in threads:
        b = t.blocked_on
        if b is not None and b.kind == WaitKind.PY_BARRIER:
            at.setdefault(b.address, []).append(t)
    edges = []
    for address, waiting in at.items():
        api = waiting[0].blocked_on.api
        if api is None or not api.referenced_by:
            continue
        here = {t.tid for t in waiting}
        missing = [tid for tid in api.referenced_by if tid not in here]
        for t in waiting:
            for owner in _unblocked_first(threads, t.tid, missing):
                edges.append(Edge(waiter=t.tid, owner=owner, kind=WaitKind.PY_BARRIER, address=address,
                                  source=OwnerSource.HEURISTIC,
                                  facts=BarrierPartyFacts(parties=api.values.get("_parties"),
                                                          waiting=api.values.get("_count"))))
    return edges


def wait_for_graph(threads, snapshots=()):
    """(edges, deadlocks, truncated): every edge, certain and likely, and
    every cycle in them; truncated when there were more cycles than listed.
    `snapshots`: the ThreadSnapshots, for the connections SQLite waits on."""
    edges = certain_edges(threads) + python_lock_holders(threads) + waitgraph.likely_holders(threads) + \
        sqlite_holders(threads, snapshots) + queue_join_workers(threads) + database_holders(threads, snapshots) + \
        pool_holders(threads, snapshots) + barrier_parties(threads)
    deadlocks, truncated = waitgraph.find_cycles(edges)
    return edges, deadlocks, truncated


def holds(edges, tid):
    """What others wait for from `tid`: [(kind, address)], each once."""
    seen = []
    for e in edges:
        if e.owner == tid and (e.kind, e.address) not in seen:
            seen.append((e.kind, e.address))
    return seen


def idle_loop_library(t):
    """The library of the native worker loop (NATIVE_IDLE_LOOPS: a
    torch.distributed gloo process group's workers) `t` waits for work in,
    or None: a thread that runs no Python, sleeps on a condition variable
    (or a bare futex) owned by none, and whose first frame outside glibc is
    the loop itself (a worker running a task has the task's frames above)."""
    b = t.blocked_on
    if t.gil != GilState.NO_PYTHON or b is None or b.kind not in (WaitKind.CONDVAR, WaitKind.FUTEX) or b.owners:
        return None
    f = next((f for f in t.native_frames if not is_system_library(f.library)), None)
    return f.library if f is not None and (f.function or "").split("(", 1)[0] in NATIVE_IDLE_LOOPS else None


# glibc's functions a thread's stack starts in: below them there is nothing more to unwind.
THREAD_STARTS = ("start_thread", "clone", "clone3")
# How deep blocked threads are unwound again when a lock records no owner (analysis.report.frames_wanted).
HEURISTIC_NATIVE_DEPTH = 16


def _unwound_whole(frames, native_depth):
    """Whether `frames` is a thread's whole native stack: it ends in glibc's thread start, or the unwinder
    stopped short of the depth it was asked for (`native_depth`, or HEURISTIC_NATIVE_DEPTH for a thread unwound
    again deeper: more frames than `native_depth`).  A glibc without symbols (a distribution's stripped libc,
    no libc6-dbg) names no start_thread: the depth says it."""
    if frames and _thread_start(frames[-1]):
        return True
    asked = native_depth if len(frames) <= native_depth else HEURISTIC_NATIVE_DEPTH
    return len(frames) < asked


def _thread_start(frame):
    return (frame.function or "").lstrip("_").replace("GI_", "", 1).lstrip("_") in THREAD_STARTS


def idle_pool_library(t, native_depth):
    """The thread-pool library (POOL_LIBRARIES) `t` is an idle worker of, or
    None.  An idle worker runs no Python, sleeps on a futex that is no known
    lock, and its whole stack, from the thread's start in glibc up, is in
    glibc and that one library (a worker running a task has the task's
    frames too)."""
    b = t.blocked_on
    frames = t.native_frames
    loop = idle_loop_library(t)
    if loop is not None:
        return loop
    if t.gil != GilState.NO_PYTHON or b is None or b.kind != WaitKind.FUTEX or b.owners:
        return None
    if not frames or not is_system_library(frames[-1].library) or not _unwound_whole(frames, native_depth):
        return None  # the stack may go on beyond what was unwound
    own = [i for i, f in enumerate(frames) if not is_system_library(f.library) and
           not is_one_of(f.library, POOL_WAIT_LIBRARIES)]
    if any(is_one_of(f.library, POOL_WAIT_LIBRARIES) for f in frames[own[0] if own else 0:]):
        return None  # a wait library above the pool's frames is a wait its work made, not the pool's own
    libraries = {frames[i].library for i in own}
    if len(libraries) != 1 or None in libraries:
        return None
    library = libraries.pop()
    return library if is_one_of(library, POOL_LIBRARIES) else None


def gil_moved(report):
    """Whether the GIL changed hands between two reads of a process read without stopping it: who holds it is
    not known because threads are running."""
    return any(getattr(w, "kind", None) == TargetWarning.GIL_MOVED for w in report.warnings)


def _free_gil_waiters(report):
    """The threads waiting for a GIL that no thread holds (gil.locked False), or whose holder is not known
    because it changed hands while the process was read (gil_moved): nobody owns it, not an unknown owner."""
    if report.gil.locked is not False and not gil_moved(report):
        return []
    return [t.tid for t in report.threads if t.blocked_on is not None and t.blocked_on.kind == WaitKind.GIL
            and not t.blocked_on.owners]


def unknown_owners(report, native_depth=None, explained=()):
    """The threads blocked on something whose owner pyhang cannot name: no
    owner recorded and no likely holder found.  [(tid, kind, address)].
    With `native_depth`, idle workers of native thread pools are left to
    their own verdict; waits for a GIL nobody holds are the GIL verdicts'
    (gil-nobody-holds, gil-handover): nobody is the owner, not an unknown one;
    idle threads (analysis.idle) wait for anyone, not an owner; `explained`:
    TIDs other verdicts speak of."""
    waiting = {e.waiter for e in report.edges}
    waiting.update(_free_gil_waiters(report))
    # A system call's wait (a pipe, a child, a sleep) has no owning thread, nor a gRPC call's (its server):
    # its blocked line says what it waits for.
    return [(t.tid, t.blocked_on.kind, t.blocked_on.address) for t in report.threads
            if t.blocked_on is not None and not t.blocked_on.owners and t.tid not in waiting
            and t.blocked_on.kind not in (WaitKind.SYSCALL, WaitKind.GRPC_CALL) and not _owner_gone(t.blocked_on)
            and t.tid not in explained and not (native_depth and idle_pool_library(t, native_depth))]


def _queue_waits(report, kind):
    """{queue address: [ThreadReport]} of the threads waiting in `kind` (a queue wait) on each queue."""
    out = {}
    for t in report.threads:
        b = t.blocked_on
        if b is not None and b.kind == kind:
            out.setdefault(b.address, []).append(t)
    return out


def _reached_only_by(api, tids, also=()):
    """Whether no thread but `tids` (and `also`) reaches the queue (`api`: a wait's ApiDetail, whose
    referenced_by was read)."""
    return api is not None and api.referenced_by is not None and \
        not [t for t in api.referenced_by if t not in tids and t not in also]


def nothing_can_wake(report, pools=None):
    """Verdicts for queue waits that no other thread of this process can
    end: a Queue.get on an empty queue, or a Queue.put on a full one, that
    no other thread reaches from its Python frames, except threads waiting
    the same way on it; a Queue.join with unfinished tasks while every
    other thread reaching the queue waits in its get() (nothing will call
    task_done(): an item was taken and its task_done() skipped), or none
    does while items remain.  Likely, never certain: a thread may reach the
    queue later through a global, or from C.  A ThreadPoolExecutor's own
    work queue (`pools`: python_api.pools; a queue.Queue before 3.7) is
    filled by submit() from whoever holds the executor: its workers waiting
    are idle, not stuck."""
    out = []
    # the waiters in a pool's checkout: the pool's holders can fill it
    checked_out = {e.waiter for e in report.edges if isinstance(e.facts, PoolCheckoutFacts)}
    getters = _queue_waits(report, WaitKind.PY_QUEUE_GET)
    for kind, waits in ((WaitKind.PY_QUEUE_GET, getters), (WaitKind.PY_QUEUE_PUT, _queue_waits(report, WaitKind.PY_QUEUE_PUT))):
        for address, waiting in waits.items():
            api = waiting[0].blocked_on.api
            values = api.values if api is not None else {}
            if kind == WaitKind.PY_QUEUE_GET and (values.get("queue_length") != 0 or address in (pools or {})):
                continue
            if kind == WaitKind.PY_QUEUE_PUT:
                maxsize, length = values.get("maxsize") or 0, values.get("queue_length")
                if maxsize <= 0 or length is None or length < maxsize:
                    continue
            tids = [t.tid for t in waiting]
            if not _reached_only_by(api, tids) or checked_out.intersection(tids):
                continue
            out.append(_nothing_can_wake(kind, address, waiting, api))
    for address, waiting in _queue_waits(report, WaitKind.PY_QUEUE_JOIN).items():
        api = waiting[0].blocked_on.api
        values = api.values if api is not None else {}
        unfinished, length = values.get("unfinished_tasks"), values.get("queue_length")
        if not unfinished or length is None or api.referenced_by is None:
            continue
        tids = [t.tid for t in waiting]
        consumers = [t.tid for t in getters.get(address, ())]
        if length == 0 and consumers and _reached_only_by(api, tids, consumers) or \
                length > 0 and _reached_only_by(api, tids):
            out.append(_nothing_can_wake(WaitKind.PY_QUEUE_JOIN, address, waiting, api,
                                         unfinished=unfinished, consumers=consumers))
    return out


def _nothing_can_wake(kind, address, waiting, api, **more):
    tids = [t.tid for t in waiting]
    return Verdict(kind=VerdictKind.NOTHING_CAN_WAKE, threads=tids,
                   facts=NothingCanWakeFacts(kind=kind, address=address, name=waiting[0].blocked_on.name,
                                             waiters=tids, referenced_by=list(api.referenced_by),
                                             complete=bool(api.references_complete), confidence=Confidence.LIKELY,
                                             length=api.values.get("queue_length"),
                                             maxsize=api.values.get("maxsize"), **more))


def queue_join_workers(threads):
    """Likely edges from each thread in a Queue.join with unfinished tasks
    to the other threads that reach the queue and do not wait in its get():
    one of them holds an item it got and will call task_done()."""
    getters = {(t.tid, t.blocked_on.address) for t in threads
               if t.blocked_on is not None and t.blocked_on.kind == WaitKind.PY_QUEUE_GET}
    joiners = {t.tid for t in threads if t.blocked_on is not None and t.blocked_on.kind == WaitKind.PY_QUEUE_JOIN}
    edges = []
    for th in threads:
        b = th.blocked_on
        if b is None or b.kind != WaitKind.PY_QUEUE_JOIN or b.api is None or b.api.referenced_by is None or \
                not b.api.values.get("unfinished_tasks"):
            continue
        for tid in b.api.referenced_by:
            if tid != th.tid and tid not in joiners and (tid, b.address) not in getters:
                edges.append(Edge(waiter=th.tid, owner=tid, kind=b.kind, address=b.address,
                                  source=OwnerSource.HEURISTIC, facts=ReachesQueueFacts()))
    return edges


def executor_starvation(report, pools):
    """Verdicts for ThreadPoolExecutors every worker of which waits for the
    result of a pending concurrent.futures.Future (`pools`: {work queue:
    [TID]}, python_api.pools).  A pending future is one no worker has taken
    yet: if it was submitted to the same pool, it can never run.  Likely:
    the pool's queue is not read, so that the futures are its own is not
    proven."""
    out = []
    for queue, workers in sorted(pools.items()):
        waits = [report.thread(tid) for tid in workers]
        if not all(t is not None and t.blocked_on is not None and t.blocked_on.kind == WaitKind.PY_FUTURE
                   and t.blocked_on.api is not None and t.blocked_on.api.values.get("_state") == "PENDING" for t in waits):
            continue
        out.append(Verdict(kind=VerdictKind.EXECUTOR_STARVATION, threads=list(workers),
                           facts=ExecutorStarvationFacts(work_queue=queue, workers=list(workers),
                                                         futures=[t.blocked_on.address for t in waits],
                                                         confidence=Confidence.LIKELY)))
    return out


def verdicts(report, holder_blocked=None, snapshots=(), native_depth=None):
    """Blocked-but-no-cycle situations.  `holder_blocked`: the facts of a
    GIL holder asleep in a system call (python_state.holder_blocked);
    `snapshots`: the ThreadSnapshots (the workers of each
    ThreadPoolExecutor: python_api.pools); `native_depth`: native frames
    collected per thread (idle pool workers).
    Never a false all-clear: threads blocked with no owner known are a
    verdict of their own."""
    out = []
    py_threads = [t for t in report.threads if t.gil not in (GilState.NO_PYTHON, GilState.UNKNOWN)]
    waiting = [t for t in py_threads if t.gil == GilState.WAITING]
    if report.gil.locked is False and waiting and len(waiting) == len(py_threads):
        out.append(Verdict(kind=VerdictKind.GIL_NOBODY_HOLDS, threads=[t.tid for t in waiting]))
    elif report.gil.locked is False and _free_gil_waiters(report):
        # the process was stopped between one thread's drop of the GIL and another's take
        out.append(Verdict(kind=VerdictKind.GIL_HANDOVER, threads=_free_gil_waiters(report)))
    if holder_blocked:
        out.append(Verdict(kind=VerdictKind.GIL_HOLDER_BLOCKED, threads=[report.gil.holder_tid],
                           facts=replace(holder_blocked)))
    for t in report.threads:
        b = t.blocked_on
        if b and b.owners and b.owner_alive is False:
            out.append(Verdict(kind=VerdictKind.OWNER_GONE, threads=[t.tid] + list(b.owners),
                               facts=OwnerGoneFacts(waiter=t.tid, kind=b.kind, address=b.address,
                                                    owners=list(b.owners))))
        elif _owner_gone(b):
            out.append(Verdict(kind=VerdictKind.OWNER_GONE, threads=[t.tid],
                               facts=OwnerGoneFacts(waiter=t.tid, kind=b.kind, address=b.address, owners=[],
                                                    owner_ident=b.python.owner_ident)))
    pools = python_api.pools(snapshots)
    out += nothing_can_wake(report, pools)
    out += executor_starvation(report, pools)
    out += held.verdicts(report)
    idle_waits = idle.idle_waits(report, snapshots, taken={tid for v in out for tid in v.threads})
    pool_workers = [(t.tid, idle_pool_library(t, native_depth)) for t in report.threads] if native_depth else []
    pool_workers = [(tid, lib) for tid, lib in pool_workers if lib]
    if pool_workers:
        out.append(Verdict(kind=VerdictKind.POOL_IDLE, threads=[tid for tid, _ in pool_workers],
                           facts=PoolIdleFacts(workers=[PoolWorker(tid=tid, library=lib) for tid, lib in pool_workers])))
    across = collectives.process_waits(report, syscalls.waits_on_processes(report))
    if across and idle_waits:
        # a Pool worker reading its task pipe waits for work its parent gives: idle, not a wait on that process
        idle_tids = {w.tid for w in idle_waits}
        across = dict(across, waits=[w for w in across["waits"] if w.tid not in idle_tids]) \
            if any(w.tid not in idle_tids for w in across["waits"]) else None
    calls = grpc_calls.process_waits(report)
    if calls:
        across = dict(across or {"waits": [], "root": report.target.pid})
        across["waits"] = list(across["waits"]) + calls
    if across:
        out.append(Verdict(kind=VerdictKind.WAITS_ON_PROCESS, threads=[w.tid for w in across["waits"]],
                           facts=WaitsOnProcessFacts(waits=across["waits"], root=across["root"],
                                                     outside=across.get("outside") or None)))
    # a thread another verdict already explains is not also of unknown owner, nor one whose wait has a
    # timeout (a Lock's acquire(timeout=...)): it ends by itself (analysis.account: idle)
    explained = {tid for v in out for tid in v.threads} | {w.tid for w in idle_waits} | \
        {s.tid for s in snapshots if syscalls.timed_futex_wait(s.registers)}
    unknown = unknown_owners(report, native_depth, explained)
    if unknown:
        out.append(Verdict(kind=VerdictKind.OWNERS_UNKNOWN, threads=[tid for tid, _, _ in unknown],
                           facts=OwnersUnknownFacts(waits=[_unknown_wait(report.thread(tid), kind, address)
                                                           for tid, kind, address in unknown])))
    if idle_waits:
        out.append(idle.verdict(idle_waits))
    return out


def _unknown_wait(t, kind, address):
    """An owners-unknown verdict's entry of thread `t`: what it waits on, and
    for a system call the call (and the fd object) it is parked in."""
    b = t.blocked_on
    if kind != WaitKind.SYSCALL:
        return UnknownOwnerWait(tid=t.tid, kind=kind, address=address, name=b.name)
    call = syscall_of(b)
    return UnknownOwnerWait(tid=t.tid, kind=kind, address=address, name=b.name, call=call.name,
                            link=(call.object or {}).get("link"))


def explained_elsewhere(verdicts, tids):
    """`verdicts` without the owners-unknown waits of `tids`, which a later
    finding explains (a fork child's lock copied locked at fork)."""
    out = []
    for v in verdicts:
        if v.kind == VerdictKind.OWNERS_UNKNOWN:
            waits = [w for w in v.facts.waits if w.tid not in tids]
            if not waits:
                continue
            v = Verdict(kind=v.kind, threads=[w.tid for w in waits], facts=replace(v.facts, waits=waits))
        out.append(v)
    return out

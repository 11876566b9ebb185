"""Waits on Python-level objects, named as such rather than as the lock or
condition below them: a Queue.get, a Semaphore.acquire, an Event.wait, a
Barrier.wait, a Future.result, an import waiting for a module lock.

Each API is recognised by the file and function of one of the waiting
thread's innermost Python frames (co_name up to 3.10, the qualified name
from 3.11); the collection then reads that frame's `self` and the
attributes listed here (ThreadSnapshot.python_api), and the analysis turns
them into the BlockedOn of the thread.
"""
from __future__ import annotations
from pyhang.model.record import record

from pyhang.model.kinds import OwnerSource, WaitKind
from pyhang.model.python_values import ObjectValue
from pyhang.model.report import BlockedOn
from pyhang.model.waits import ApiDetail

INNERMOST = 4   # frames looked at, as the Python-lock search does


@record(frozen=True)
class Api:
    kind: str
    file: str                    # the frame's file ends with this
    functions: tuple[str, ...]   # co_name and qualified name
    attributes: tuple[str, ...]  # of `self`, for the renderer and for owners
    types: tuple[str, ...] = ()  # when not empty: self's type name must end with one of these


APIS = (
    Api(WaitKind.PY_QUEUE_GET, "/queue.py", ("get", "Queue.get"), ("maxsize", "queue")),
    Api(WaitKind.PY_QUEUE_PUT, "/queue.py", ("put", "Queue.put"), ("maxsize", "queue")),
    Api(WaitKind.PY_QUEUE_JOIN, "/queue.py", ("join", "Queue.join"), ("unfinished_tasks", "maxsize", "queue")),
    Api(WaitKind.PY_SEMAPHORE, "/threading.py", ("acquire", "Semaphore.acquire"), ("_value", "_initial_value"),
        ("Semaphore",)),
    Api(WaitKind.PY_EVENT, "/threading.py", ("wait", "Event.wait"), ("_flag",), ("Event",)),
    Api(WaitKind.PY_BARRIER, "/threading.py", ("wait", "Barrier.wait", "_wait", "Barrier._wait"),
        ("_parties", "_count", "_state"), ("Barrier",)),
    Api(WaitKind.PY_FUTURE, "/concurrent/futures/_base.py", ("result", "Future.result", "exception",
                                                             "Future.exception"), ("_state",)),
    Api(WaitKind.PY_IMPORT_LOCK, "importlib._bootstrap>", ("acquire", "_ModuleLock.acquire"),
        ("name", "owner", "count")),
)


# Connection pools whose checkout waits for a connection another thread returns: (file, functions of the
# checkout frame, whose `self` is the pool, and the type names that pool may have: () for any; redis-py's
# ConnectionPool has a get_connection too, which never waits).
POOL_CHECKOUTS = (("/sqlalchemy/pool/impl.py", ("_do_get", "QueuePool._do_get"), ()),
                  ("/urllib3/connectionpool.py", ("_get_conn", "HTTPConnectionPool._get_conn"), ()),
                  ("/redis/connection.py", ("get_connection", "BlockingConnectionPool.get_connection"),
                   ("BlockingConnectionPool",)))
# What a thread holding one of a pool's connections has in its frames' locals: type name → the attributes
# that lead from it to the pool (SQLAlchemy's Connection → its _ConnectionFairy → the pool; urllib3's
# HTTPResponse, and requests' Response through its raw HTTPResponse).
POOL_HOLDINGS = {"Connection": ("_dbapi_connection", "_pool"), "HTTPResponse": ("_pool",),
                 "Response": ("raw", "_pool")}
# A pool's connection held in a frame that names the pool in a local, where the connection leads nowhere
# back to its pool (redis-py's Connection): the connection's type names → the local naming the pool
# (Redis.execute_command's `pool`, with its `conn`).
POOL_FRAME_HOLDINGS = {("Connection", "SSLConnection", "UnixDomainSocketConnection"): "pool"}
# Innermost frames looked at for the checkout.
CHECKOUT_DEPTH = 8


def checkout_frame(view, tid):
    """(index, function, file, types) of the pool checkout among the innermost frames of `tid`, or None:
    `types` the type names its `self` must have (POOL_CHECKOUTS; () for any)."""
    for i, (function, file, *rest) in enumerate(view.frame_keys(tid)[:CHECKOUT_DEPTH]):
        for path, functions, types in POOL_CHECKOUTS:
            if function in functions and file.endswith(path):
                return i, function, file, types
    return None


def frame_pool_holdings(locals_, pools):
    """[(local, pool)] of a frame's locals (LocalValues) that are a pool's connection by POOL_FRAME_HOLDINGS:
    a connection of one of its types, in a frame whose local of that name is one of `pools` (addresses)."""
    out = []
    by_name = {v.name: v for v in locals_}
    for types, name in POOL_FRAME_HOLDINGS.items():
        pool = by_name.get(name)
        if pool is None or pool.address not in pools:
            continue
        out += [(v, pool.address) for v in locals_ if v.type in types and v.address]
    return out


def candidates(view, tid):
    """[(frame index, Api)] of the innermost frames of `tid` that may be a
    known API, innermost first: the collection reads their `self` and takes
    the first whose type fits (type_fits)."""
    out = []
    for i, (function, file, *_) in enumerate(view.frame_keys(tid)[:INNERMOST]):
        for api in APIS:
            if function in api.functions and file.endswith(api.file):
                out.append((i, api))
    return out


def type_fits(api, type_name):
    """Whether `self` of type `type_name` is what `api` is about (co_name
    alone cannot tell Event.wait from Condition.wait before 3.11)."""
    return not api.types or (type_name or "").endswith(api.types)


def api_of(python_api):
    """The Api of collected facts (an ApiWait), or None when `self` is not of its type."""
    if python_api is None:
        return None
    api = next((a for a in APIS if a.kind == python_api.kind), None)
    if api is None or not python_api.object or not type_fits(api, python_api.type):
        return None
    return api


def references_wanted(python_api):
    """The object whose referencing threads the collection reads for this
    wait (PythonLocks.thread_references), or None: the queue of a Queue.get,
    put or join, to tell whether any other thread can still put to it, get
    from it or call its task_done(); the Barrier of a Barrier.wait, to name the parties that have not
    arrived."""
    api = api_of(python_api)
    return python_api.object if api is not None and api.kind in QUEUE_WAITS + (WaitKind.PY_BARRIER,) else None


QUEUE_WAITS = (WaitKind.PY_QUEUE_GET, WaitKind.PY_QUEUE_PUT, WaitKind.PY_QUEUE_JOIN)


# concurrent.futures.thread._worker(executor_reference, work_queue, ...): the
# loop of every ThreadPoolExecutor worker; `work_queue` is its pool's own.
WORKER = ("/concurrent/futures/thread.py", ("_worker",), "work_queue")


# The worker loop runs right above threading's bootstrap (_bootstrap,
# _bootstrap_inner, Thread.run): it is looked for among this many outermost frames.
WORKER_DEPTH = 16


# concurrent.futures.thread._WorkItem.run: a worker running a task; its
# `self.future` is the Future the task completes.
WORK_ITEM = ("/concurrent/futures/thread.py", ("run", "_WorkItem.run"), "_WorkItem", "future")


def work_item_frame(view, tid):
    """(index, PyFrameFacts) of the _WorkItem.run frame on the stack of `tid`, at any depth (a task's own
    calls are above it), or None."""
    for i, key in enumerate(view.frame_keys(tid)):
        if key[0] in WORK_ITEM[1] and key[1].endswith(WORK_ITEM[0]):
            return i, view.frames(tid)[i]
    return None


def work_item_self(frames):
    """The address of the _WorkItem a work_item_frame runs, from the thread's frame_selves (FrameSelfs of
    its innermost frames), or None when they do not reach it."""
    return next((f.object for f in frames or () if f.function in WORK_ITEM[1] and (f.file or "").endswith(WORK_ITEM[0])
                 and f.object and (f.type or "").endswith(WORK_ITEM[2])), None)


def work_item(found):
    """The address of the _WorkItem a work_item_frame runs (its `self`), from its FrameLocals `found`, or
    None."""
    first = next(iter(found.locals), None) if found is not None else None
    if first is None or first.name != "self" or not first.address or not (first.type or "").endswith(WORK_ITEM[2]):
        return None
    return first.address


# concurrent.futures.as_completed and wait sleep in Event.wait on a waiter that every Future of theirs still
# pending holds in its _waiters: the frame's file, and the local holding those Futures by function (a set;
# `fs`, every Future given, where that local is missing).
FUTURES_WAITS = ("/concurrent/futures/_base.py", {"as_completed": "pending", "wait": "not_done"}, "fs")
_EVENT_WAIT = ("/threading.py", ("wait", "Event.wait"))


def futures_wait_frame(view, tid):
    """(frame index, function) of the concurrent.futures.as_completed or wait frame right above the
    Event.wait among the innermost frames of `tid`, or None."""
    keys = view.frame_keys(tid)[:INNERMOST + 1]
    for i in range(1, len(keys)):
        function, file = keys[i][0], keys[i][1]
        if function in FUTURES_WAITS[1] and file.endswith(FUTURES_WAITS[0]) and \
                keys[i - 1][0] in _EVENT_WAIT[1] and keys[i - 1][1].endswith(_EVENT_WAIT[0]):
            return i, function
    return None


def futures_local(found, function):
    """The LocalValue holding the Futures a futures_wait_frame of `function` still waits for, from its
    FrameLocals `found`, or None."""
    by_name = {v.name: v for v in found.locals} if found is not None else {}
    local = by_name.get(FUTURES_WAITS[1][function]) or by_name.get(FUTURES_WAITS[2])
    return local if local is not None and local.address and local.type in ("set", "frozenset") else None


def future_runners(report, snapshots):
    """The owner of each wait on a concurrent.futures.Future that a worker
    thread's running work item completes (ThreadSnapshot.pool_worker's
    future): that worker, certain (read from the work item itself).  A wait
    in as_completed or wait (ApiDetail.futures) is owned by every worker
    running one of its Futures."""
    runs = {s.pool_worker.future: s.tid for s in snapshots if s.pool_worker is not None and s.pool_worker.future}
    order = {t.tid: i for i, t in enumerate(report.threads)}
    for t in report.threads:
        b = t.blocked_on
        if b is None or b.owners:
            continue
        if b.kind == WaitKind.PY_FUTURE:
            owners = [runs[b.address]] if b.address in runs else []
        else:
            owners = sorted({runs[f] for f in (b.api.futures or ()) if f in runs} if b.api is not None else (),
                            key=lambda tid: order.get(tid, len(order)))
        owners = [tid for tid in owners if tid != t.tid]
        if owners:
            b.owners = owners
            b.owner_source = OwnerSource.WORK_ITEM


def worker_frame(view, tid):
    """The frame (PyFrameFacts) of a ThreadPoolExecutor worker's
    loop on the stack of `tid`, or None: the collection reads its
    `work_queue` local (ThreadSnapshot.pool_worker)."""
    keys = view.frame_keys(tid)
    for i in range(max(0, len(keys) - WORKER_DEPTH), len(keys)):
        function, file = keys[i][0], keys[i][1]
        if function in WORKER[1] and file.endswith(WORKER[0]):
            return view.thread(tid).frames[i]
    return None


def pools(threads):
    """{work queue: [TID]}: the workers of each ThreadPoolExecutor (ThreadSnapshots)."""
    out = {}
    for t in threads:
        q = t.pool_worker.work_queue if t.pool_worker is not None else None
        if q:
            out.setdefault(q, []).append(t.tid)
    return out


_NO_VALUE = ObjectValue()   # an attribute the object does not have


def _integer(attributes, name):
    v = (attributes or {}).get(name)
    return v.integer if v is not None else None


def api_wait(python_api, primitive, ident_tid):
    """BlockedOn for a wait inside a Python-level API (`python_api`: the
    snapshot's facts), or None.  `primitive`: the BlockedOn of the lock or
    condition it sleeps on, or None; `ident_tid(ident)`: the LWP of a
    pthread_t / threading ident, or None."""
    api = api_of(python_api)
    if api is None:
        return None
    attrs = python_api.attributes or {}
    detail = ApiDetail(type=python_api.type, frame=python_api.frame, api_file=api.file)
    for name in api.attributes:
        v = attrs.get(name) or _NO_VALUE
        detail.values[name] = v.integer if v.integer is not None else v.text
        if v.length is not None and v.kind != "str":
            detail.values[name + "_length"] = v.length
    if primitive is not None:
        detail.primitive = {"kind": primitive.kind, "address": primitive.address}
    if python_api.referenced_by is not None:
        detail.referenced_by = list(python_api.referenced_by)
        detail.references_complete = python_api.references_complete
    if python_api.futures is not None:
        detail.futures, detail.futures_by = list(python_api.futures), python_api.futures_by
    b = BlockedOn(kind=api.kind, address=python_api.object, owner_source=OwnerSource.UNKNOWN,
                  confidence=primitive.confidence if primitive else None, api=detail)
    if api.kind == WaitKind.PY_IMPORT_LOCK:
        owner = _integer(attrs, "owner")
        count = attrs.get("count") or _NO_VALUE
        # an int up to 3.11; from 3.12 a list with one entry per acquisition
        count = count.integer if count.integer is not None else count.length
        tid = ident_tid(owner) if owner else None
        if tid and count:
            b.owners = [tid]
            b.owner_source = OwnerSource.LOCK_WORD
    return b

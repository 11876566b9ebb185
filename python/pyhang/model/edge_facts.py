"""The facts of a thread edge (model.report.Edge), one record per heuristic
that gives an edge facts: what it found the edge from, and what render words
its evidence from.  An edge a decoder read for sure has none (None; its JSON
`facts` is {}); `FACTS` lists every record.  An edge's JSON `facts` is its
record's fields as to_data() keeps them (record.fields_of), in field order.

A field in a record's `__optional__` is one the JSON carries only at times,
as the analysis has always written them (a Lock waiting on itself carries
`handler` and `interrupted` only inside a signal handler).  The frames,
connections, sessions and pools they name stay JSON's dicts, as the
analysis gathers them (their keys are in docs/json-contract.md's edges)."""
from __future__ import annotations

from pyhang.model.record import field, record


@record
class LoopSelfFacts:
    """A Future only the waiter's own event loop completes, waited on from the loop's own thread
    (analysis.deadlocks.certain_edges): an edge to itself."""
    self: bool = True
    loop: int | None = None              # the event loop's address


@record
class LockSuspectFacts:
    """A thread whose innermost Python frames reference the threading.Lock the waiter waits on
    (analysis.deadlocks.python_lock_holders)."""
    references: dict | None = None       # the frame that references it {function, file, line, ...}


def _none(name):
    """The test of a field left out while it is None (present, it is never null)."""
    def test(r):
        return getattr(r, name) is None
    test.while_none = True
    return test


def _outside_handler(r):
    return r.handler is None


@record
class LockSelfFacts:
    """A Lock the waiter itself holds, referenced by an outer frame of its own stack
    (analysis.deadlocks.python_lock_holders): an edge to itself."""
    references: dict | None = None       # the outer frame that references it
    self: bool = True
    waits_in: dict | None = None         # the frame it waits in {function, file, line}
    handler: dict | None = None          # a signal handler it waits in {function, file, line, signal}
    interrupted: dict | None = None      # the frame that handler interrupted {function, file, line}

    __optional__ = {"handler": _none("handler"), "interrupted": _outside_handler}


@record
class SqliteHoldersFacts:
    """A thread holding a sqlite3.Connection while another waits in SQLite's busy handler
    (analysis.deadlocks.sqlite_holders)."""
    connections: list[dict] = field(default_factory=list)   # its connections [{name, type, frame, ...}]


@record
class DatabaseFacts:
    """A thread holding a PostgreSQL connection while another's query waits in the server for a lock
    (analysis.deadlocks.database_holders)."""
    database: dict                       # the waiting backend {pid, title}
    connections: list[dict]              # the owner's PostgreSQL connections
    open_transactions: list[dict]        # this process's sessions `idle in transaction` [{pid, title, state, ...}]
    backend: dict | None = None          # the owner's own session among them, matched by its backend PID
    status_agrees: bool = False          # with `backend`: a connection's status says inside a transaction

    __optional__ = {"backend": _none("backend"), "status_agrees": lambda r: r.backend is None}


@record
class ReachesObjectFacts:
    """A thread whose query waits in the PostgreSQL server reaches from its frames the Event or Condition that
    a holder of such a connection waits on: a likely setter (analysis.deadlocks.database_holders)."""
    reaches_object: bool = True


@record
class PoolCheckoutFacts:
    """A thread holding connections of the pool another thread's checkout waits in
    (analysis.deadlocks.pool_holders)."""
    pool: dict                           # the checkout {pool, type, ...}
    connections: list[dict]              # the owner's connections of that pool


@record
class BarrierPartyFacts:
    """A thread reaching a threading.Barrier from its frames that has not arrived at it
    (analysis.deadlocks.barrier_parties)."""
    party: bool = True
    parties: int | None = None           # the Barrier's parties
    waiting: int | None = None           # how many wait at it


@record
class ReachesQueueFacts:
    """A thread reaching the queue a Queue.join waits on that does not wait in its get()
    (analysis.deadlocks.queue_join_workers)."""
    reaches_queue: bool = True


@record
class DriverLockFacts:
    """A thread inside the library that took a native lock recording no owner
    (analysis.waitgraph.likely_holders)."""
    library: str | None                  # the library
    library_frame: int                   # the index of its first frame there
    driver_library: bool                 # a driver's (libraries.is_driver_library)
    waits_for_gil: bool
    callback: dict | None                # it entered Python from inside the library {function, frame}
    blocked_kind: str                    # model.kinds.WaitKind of its own wait


# Every record of an edge's facts (python/tests/test_schema_model.py finds each in the JSON Schema).
FACTS = (LoopSelfFacts, LockSuspectFacts, LockSelfFacts, SqliteHoldersFacts, DatabaseFacts, ReachesObjectFacts,
         PoolCheckoutFacts, BarrierPartyFacts, ReachesQueueFacts, DriverLockFacts)


def schema_name(cls):
    """The JSON Schema's definition of record `cls`: edge_facts_loop_self for LoopSelfFacts."""
    name = cls.__name__[:-len("Facts")]
    return "edge_facts" + "".join("_" + c.lower() if c.isupper() else c for c in name)


def references_of(facts):
    """The frame that references the Lock of a Python-lock edge's facts, or None."""
    return facts.references if isinstance(facts, (LockSuspectFacts, LockSelfFacts)) else None


def connections_of(facts):
    """The connections an edge's owner holds (sqlite, database, pool facts), or ()."""
    return facts.connections if isinstance(facts, (SqliteHoldersFacts, DatabaseFacts, PoolCheckoutFacts)) else ()


def signal_handler(frames):
    """(handler, interrupted) of a thread whose Python `frames` run a signal handler: the innermost such frame
    {function, file, line, signal}, and the frame it interrupted (the next outer one) or None; else None."""
    k = next((k for k, f in enumerate(frames) if f.signal is not None), None)
    if k is None:
        return None

    def at(f):
        return {"function": f.function, "file": f.file, "line": f.line}
    return dict(at(frames[k]), signal=frames[k].signal), at(frames[k + 1]) if k + 1 < len(frames) else None

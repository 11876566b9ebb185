"""The facts of a thread edge (model.report.Edge), one record per heuristic
that gives an edge facts: what it found the edge from, and what render words
its evidence from.  An edge a decoder read for sure has none (None; its JSON
`facts` is {}); `FACTS` lists every record.  An edge's JSON `facts` is its
record's fields as to_data() keeps them (record.fields_of), in field order.

A field in a record's `__optional__` is one the JSON carries only at times,
as the analysis has always written them (a Lock waiting on itself carries
`handler` and `interrupted` only inside a signal handler).  The entries they
hold are records too (below; a frame's place is a model.waits.CodeLine, a
PostgreSQL session a model.files.PgSession), each with its keys in the order
the JSON has always given them (a connection of a redis-py pool, found by
the frame that names its pool, gave its `frame` last) and left out where it
has always left them out (their keys are in docs/json-contract.md's edges);
the facts records name them in `__nested__`, so data that holds them as
dicts reads back into them."""
from __future__ import annotations

from pyhang.model.files import PgSession
from pyhang.model.record import field, record
from pyhang.model.waits import CodeLine

# psycopg2's connection type, whose members a held connection carries (HeldConnection)
PSYCOPG2_CONNECTION = "psycopg2.extensions.connection"


def _none(name):
    """The test of a field left out while it is None (present, it is never null)."""
    def test(r):
        return getattr(r, name) is None
    test.while_none = True
    return test


def _not_psycopg2(r):
    """The test of a field only a psycopg2 connection carries (its members, its backend)."""
    return r.type != PSYCOPG2_CONNECTION


# --- the entries of the facts

@record
class HandlerFrame:
    """A Python frame that runs a signal handler, and the signal it runs for."""
    function: str = ""
    file: str = ""
    line: int = 0
    signal: int = 0


@record
class HeldConnection:
    """A database or pool connection a thread's innermost Python frames hold in a local
    (analysis.gather): the object, the local and the frame that holds it; its type where the search
    typed it (a sqlite3.Connection's is not); a psycopg2 connection's members (`status`: STATUS_*, 2
    inside a transaction; None where not read) and its backend's PID read from its PGconn; and a pool's
    connection the pool it leads to."""
    address: int
    name: str
    frame: CodeLine
    type: str | None = None
    status: int | None = None
    closed: int | None = None
    server_version: int | None = None
    backend_pid: int | None = None
    pool: int | None = None

    __optional__ = {"type": _none("type"), "status": _not_psycopg2, "closed": _not_psycopg2,
                    "server_version": _not_psycopg2, "backend_pid": _not_psycopg2, "pool": _none("pool")}
    __nested__ = {"frame": CodeLine}


@record
class PgBackend:
    """A PostgreSQL backend at the other end of a thread's socket: its PID, and the title it says its state in."""
    pid: int
    title: str | None


@record
class PoolCheckout:
    """A connection pool's checkout a thread waits in (analysis.gather.add_pool_checkouts): the pool (the
    checkout frame's `self`), its type, and that frame."""
    pool: int
    type: str | None
    frame: CodeLine

    __nested__ = {"frame": CodeLine}


@record
class LibraryCallback:
    """Where a thread inside a native library entered Python from it: the callback's function and native frame."""
    function: str
    frame: int


# --- the facts of each heuristic


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
    references: CodeLine | None = None   # the frame that references it

    __nested__ = {"references": CodeLine}


def _outside_handler(r):
    return r.handler is None


@record
class LockSelfFacts:
    """A Lock the waiter itself holds, referenced by an outer frame of its own stack
    (analysis.deadlocks.python_lock_holders): an edge to itself."""
    references: CodeLine | None = None   # the outer frame that references it
    self: bool = True
    waits_in: CodeLine | None = None     # the frame it waits in
    handler: HandlerFrame | None = None  # a signal handler it waits in
    interrupted: CodeLine | None = None  # the frame that handler interrupted

    __optional__ = {"handler": _none("handler"), "interrupted": _outside_handler}
    __nested__ = {"references": CodeLine, "waits_in": CodeLine, "handler": HandlerFrame, "interrupted": CodeLine}


@record
class SqliteHoldersFacts:
    """A thread holding a sqlite3.Connection while another waits in SQLite's busy handler
    (analysis.deadlocks.sqlite_holders)."""
    connections: list[HeldConnection] = field(default_factory=list)   # its sqlite3 connections

    __nested__ = {"connections": HeldConnection}


@record
class DatabaseFacts:
    """A thread holding a PostgreSQL connection while another's query waits in the server for a lock
    (analysis.deadlocks.database_holders)."""
    database: PgBackend                  # the waiting backend
    connections: list[HeldConnection]    # the owner's PostgreSQL connections
    open_transactions: list[PgSession]   # this process's sessions `idle in transaction`
    backend: PgSession | None = None     # the owner's own session among them, matched by its backend PID
    status_agrees: bool = False          # with `backend`: a connection's status says inside a transaction

    __optional__ = {"backend": _none("backend"), "status_agrees": lambda r: r.backend is None}
    __nested__ = {"database": PgBackend, "connections": HeldConnection, "open_transactions": PgSession,
                  "backend": PgSession}


@record
class ReachesObjectFacts:
    """A thread whose query waits in the PostgreSQL server reaches from its frames the Event or Condition that
    a holder of such a connection waits on: a likely setter (analysis.deadlocks.database_holders)."""
    reaches_object: bool = True


@record
class PoolCheckoutFacts:
    """A thread holding connections of the pool another thread's checkout waits in
    (analysis.deadlocks.pool_holders)."""
    pool: PoolCheckout                   # the checkout
    connections: list[HeldConnection]    # the owner's connections of that pool

    __nested__ = {"pool": PoolCheckout, "connections": HeldConnection}


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
    callback: LibraryCallback | None     # it entered Python from inside the library
    blocked_kind: str                    # model.kinds.WaitKind of its own wait

    __nested__ = {"callback": LibraryCallback}


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
    (a HandlerFrame), and the frame it interrupted (the next outer one, a CodeLine) or None; else None."""
    k = next((k for k, f in enumerate(frames) if f.signal is not None), None)
    if k is None:
        return None
    f = frames[k]
    outer = frames[k + 1] if k + 1 < len(frames) else None
    return HandlerFrame(f.function, f.file, f.line, f.signal), \
        CodeLine(outer.function, outer.file, outer.line) if outer is not None else None

"""Waits on a database server (pyhang.analysis.deadlocks.database_holders): a query whose PostgreSQL
backend says it waits (`UPDATE waiting`) waits on the threads holding a PostgreSQL connection when this
process has a session `idle in transaction`; a connection holder waiting on an Event the query's thread
reaches waits back: a likely cycle through the database, never certain; of the holders, those whose
connection is inside a transaction (psycopg2's connection.status).  Synthetic facts, no server."""
from pyhang.analysis import deadlocks, waitgraph
from pyhang.model.files import FdObject
from pyhang.model.kinds import WaitKind
from pyhang.model.record import from_data
from pyhang.model.report import BlockedOn, ThreadReport
from pyhang.model.snapshot import ThreadSnapshot
from pyhang.model.waits import ApiDetail, SyscallWait

WAITING = "postgres: app shop 127.0.0.1(41002) UPDATE waiting"
OPEN_TX = {"pid": 501, "title": "postgres: app shop 127.0.0.1(41000) idle in transaction",
           "state": "idle in transaction", "local": "127.0.0.1:41000"}


def _query(tid, sessions, title=WAITING):
    sock = from_data(FdObject, {"kind": "socket", "link": "socket:[9]", "holders_complete": True,
                                "holders": [{"pid": 502, "comm": "postgres", "title": title, "fds": [9],
                                             "sessions": sessions}]})
    b = BlockedOn(kind=WaitKind.SYSCALL, syscall=SyscallWait(name="poll", watches_fds=True, fds_count=1,
                                                             fds=[{"fd": 4, "direction": "read", "object": sock}]))
    return ThreadReport(tid=tid, gdb_num=tid, blocked_on=b)


def _event_waiter(tid, reached_by):
    b = BlockedOn(kind=WaitKind.PY_EVENT, address=0x7000,
                  api=ApiDetail(referenced_by=list(reached_by)))
    return ThreadReport(tid=tid, gdb_num=tid, blocked_on=b)


def _holding(tid, status=None):
    return ThreadSnapshot(num=tid, tid=tid, connections=[{"address": 0x9000 + tid, "name": "conn", "type":
                                                          "psycopg2.extensions.connection", "status": status,
                                                          "frame": {"function": "f", "file": "app.py", "line": 3}}])


def test_a_query_waiting_in_postgres_and_an_idle_transaction_holder_waiting_on_its_event_are_a_likely_cycle():
    threads = [_query(2, [OPEN_TX]), _event_waiter(3, [2])]
    edges = deadlocks.database_holders(threads, [_holding(2), _holding(3)])
    assert {(e.waiter, e.owner) for e in edges} == {(2, 3), (3, 2)}
    db = next(e for e in edges if e.waiter == 2)
    assert db.facts["database"] == {"pid": 502, "title": WAITING} and db.facts["open_transactions"] == [OPEN_TX]
    (d,), _ = waitgraph.find_cycles(edges)
    assert d.confidence == "likely" and d.threads == [2, 3]


def test_no_session_idle_in_transaction_is_no_evidence_of_a_holder_in_this_process():
    idle = dict(OPEN_TX, state="idle", title="postgres: app shop 127.0.0.1(41000) idle")
    assert deadlocks.database_holders([_query(2, [idle]), _event_waiter(3, [2])], [_holding(3)]) == []


def test_a_backend_that_is_not_waiting_gives_no_edge():
    running = "postgres: app shop 127.0.0.1(41002) SELECT"
    assert deadlocks.database_holders([_query(2, [OPEN_TX], running), _event_waiter(3, [2])], [_holding(3)]) == []


def test_a_thread_that_joins_the_query_is_a_holder_only_when_no_other_holds_a_connection():
    joiner = ThreadReport(tid=1, gdb_num=1, blocked_on=BlockedOn(kind=WaitKind.PY_JOIN, owners=[2]))
    threads = [joiner, _query(2, [OPEN_TX]), _event_waiter(3, [2])]
    assert {e.owner for e in deadlocks.database_holders(threads, [_holding(1), _holding(3)]) if e.waiter == 2} == {3}
    assert {e.owner for e in deadlocks.database_holders(threads[:2], [_holding(1)]) if e.waiter == 2} == {1}


def test_an_event_nobody_waiting_on_the_database_reaches_makes_no_edge_back():
    edges = deadlocks.database_holders([_query(2, [OPEN_TX]), _event_waiter(3, [7])], [_holding(3)])
    assert {(e.waiter, e.owner) for e in edges} == {(2, 3)}


def test_the_link_points_at_the_holders_whose_connection_is_inside_a_transaction_never_outside_any():
    # psycopg2's connection.status: 2 in a transaction, 1 ready (none open); None where it was not read
    threads = [_query(2, [OPEN_TX]), _event_waiter(3, [2]), _event_waiter(4, [9]), _event_waiter(5, [9])]

    def owners(snaps):
        return {e.owner for e in deadlocks.database_holders(threads, snaps) if e.waiter == 2}
    assert owners([_holding(2, 2), _holding(3, 2), _holding(4, 1), _holding(5)]) == {3}
    # no holder known to be in a transaction: those whose status is unknown, never one known to be outside
    assert owners([_holding(2, 2), _holding(4, 1), _holding(5)]) == {5}
    assert owners([_holding(2, 2), _holding(4, 1)]) == set()

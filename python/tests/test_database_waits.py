"""Waits on a database server (pyhang.analysis.deadlocks.database_holders): a query whose PostgreSQL
backend says it waits (`UPDATE waiting`) waits on the threads holding a PostgreSQL connection when this
process has a session `idle in transaction`; a connection holder waiting on an Event the query's thread
reaches waits back: a likely cycle through the database, never certain; of the holders, the one whose
connection's backend (the backend PID its PGconn holds: gather._add_pg_backends) is the session `idle in
transaction`, the connection's status said as corroboration; where no backend is known, those whose
connection is inside a transaction (psycopg2's connection.status).  Synthetic facts, no server."""
from pyhang.analysis import deadlocks, gather, waitgraph
from pyhang.model.edge_facts import PSYCOPG2_CONNECTION, HeldConnection, PgBackend
from pyhang.model.files import FdObject, PgSession
from pyhang.model.kinds import WaitKind
from pyhang.model.record import from_data, to_data
from pyhang.model.report import BlockedOn, ThreadReport
from pyhang.model.snapshot import ThreadSnapshot
from pyhang.model.waits import ApiDetail, CodeLine, SyscallWait

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


def _holding(tid, status=None, backend=None):
    return ThreadSnapshot(num=tid, tid=tid, connections=[HeldConnection(
        0x9000 + tid, "conn", CodeLine("f", "app.py", 3), type=PSYCOPG2_CONNECTION, status=status, backend_pid=backend)])


def _connection(address, server_version=150018):
    """A psycopg2 connection of `address` whose server_version was read."""
    return HeldConnection(address, "conn", CodeLine("f", "app.py", 3), type=PSYCOPG2_CONNECTION,
                          server_version=server_version)


def test_a_query_waiting_in_postgres_and_an_idle_transaction_holder_waiting_on_its_event_are_a_likely_cycle():
    threads = [_query(2, [OPEN_TX]), _event_waiter(3, [2])]
    edges = deadlocks.database_holders(threads, [_holding(2), _holding(3)])
    assert {(e.waiter, e.owner) for e in edges} == {(2, 3), (3, 2)}
    db = next(e for e in edges if e.waiter == 2)
    assert db.facts.database == PgBackend(502, WAITING) and db.facts.open_transactions == [PgSession(**OPEN_TX)]
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


def test_the_link_rests_on_the_backend_the_holders_connection_is_connected_to_the_status_only_corroborates():
    threads = [_query(2, [OPEN_TX]), _event_waiter(3, [2]), _event_waiter(4, [9])]

    def edges(snaps):
        return [e for e in deadlocks.database_holders(threads, snaps) if e.waiter == 2]
    # both say inside a transaction; only 4's connection is the session idle in transaction (PID 501)
    (e,) = edges([_holding(2, 2, 502), _holding(3, 2, 777), _holding(4, 2, 501)])
    assert e.owner == 4 and e.facts.backend == PgSession(**OPEN_TX) and e.facts.status_agrees is True
    # the status read as outside any transaction does not undo the match: said, as a disagreement
    (e,) = edges([_holding(2, 2, 502), _holding(3, 2, 777), _holding(4, 1, 501)])
    assert e.owner == 4 and e.facts.status_agrees is False
    # every backend known and none the open transaction's: no link, whatever the status says
    assert edges([_holding(2, 2, 502), _holding(3, 2, 777), _holding(4, 2, 778)]) == []
    # a backend not read: the status decides, among the threads whose backend is not known
    assert [e.owner for e in edges([_holding(2, 2, 502), _holding(3, 2, 777), _holding(4, 2)])] == [4]
    assert "backend" not in to_data(edges([_holding(2, 2, 502), _holding(4, 2)])[0].facts)


class _Memory:
    """facts.words over a dict of 32-bit words."""
    def __init__(self, words):
        self.memory = words

    def words(self, addresses):
        return [self.memory.get(a) for a in addresses]


def _connection_memory(obj, pgconn, server_version=150018, be_pid_at=0x308, be_pid=501):
    words = {obj + 4 * i: 0 for i in range(gather.PG_OBJECT_WORDS)}
    words[obj + 124] = server_version                       # int server_version, then PGconn *pgconn
    words[obj + 128], words[obj + 132] = pgconn & 0xffffffff, pgconn >> 32
    words.update({pgconn + 4 * i: 3 for i in range(gather.PGCONN_WORDS)})
    words[pgconn + be_pid_at] = be_pid
    return words


def test_a_connections_backend_pid_is_read_from_its_pgconn_found_after_its_server_version():
    mem = _connection_memory(0x10000, 0x7f0000020000)
    mem.update(_connection_memory(0x30000, 0x7f0000040000, be_pid_at=0x410, be_pid=503))
    conns = [_connection(0x10000), _connection(0x30000)]
    gather._add_pg_backends(_Memory(mem), conns, {501, 502, 503})
    assert [c.backend_pid for c in conns] == [501, 503]


def test_no_backend_pid_when_the_server_version_is_not_found_once_or_two_connections_claim_one_backend():
    mem = _connection_memory(0x10000, 0x7f0000020000)
    mem[0x10000 + 60] = 150018     # a second word with the server's version: the layout is not known
    conns = [_connection(0x10000)]
    gather._add_pg_backends(_Memory(mem), conns, {501})
    assert conns[0].backend_pid is None
    mem = _connection_memory(0x10000, 0x7f0000020000)
    mem.update(_connection_memory(0x30000, 0x7f0000040000))     # both hold PID 501
    conns = [_connection(0x10000), _connection(0x30000)]
    gather._add_pg_backends(_Memory(mem), conns, {501})
    assert [c.backend_pid for c in conns] == [None, None]

"""Connection pools and Barriers name who can end their waits (pyhang.analysis.deadlocks.pool_holders,
barrier_parties): a checkout waits on the threads holding that pool's connections; a Barrier's waiters on
the threads that reach it and have not arrived (not those whose own recorded wait is on another of
them); a pool whose queue another thread's connection can refill is never "nothing can wake"; a redis-py
connection is its pool's where the frame holding it names that pool (python_api.frame_pool_holdings).
Synthetic facts."""
from pyhang.analysis import deadlocks, python_api
from pyhang.model.edge_facts import HeldConnection, PoolCheckout
from pyhang.model.kinds import WaitKind
from pyhang.model.python_values import LocalValue
from pyhang.model.record import to_data
from pyhang.model.report import BlockedOn, ThreadReport
from pyhang.model.snapshot import ThreadSnapshot
from pyhang.model.waits import ApiDetail, CodeLine

POOL, OTHER = 0x5000, 0x6000


def _conn(pool):
    return HeldConnection(0x9000 + pool, "conn", CodeLine("handler", "app.py", 9), type="Connection", pool=pool)


def _waiting(tid, kind, address, referenced_by=None, owners=()):
    return ThreadReport(tid=tid, gdb_num=tid, blocked_on=BlockedOn(
        kind=kind, address=address, owners=list(owners),
        api=ApiDetail(referenced_by=referenced_by, values={"_parties": 3, "_count": 2})))


def test_a_checkout_waits_on_the_threads_holding_that_pools_connections_only():
    threads = [_waiting(1, WaitKind.PY_QUEUE_GET, 0x100), _waiting(2, WaitKind.PY_BARRIER, 0x200),
               _waiting(3, WaitKind.PY_BARRIER, 0x200), _waiting(4, WaitKind.PY_EVENT, 0x300)]
    snaps = [ThreadSnapshot(num=1, tid=1, pool_checkout=PoolCheckout(POOL, "QueuePool", CodeLine("get", "pool.py", 1))),
             ThreadSnapshot(num=2, tid=2, connections=[_conn(POOL)]),
             ThreadSnapshot(num=3, tid=3, connections=[_conn(POOL)]),
             ThreadSnapshot(num=4, tid=4, connections=[_conn(OTHER)])]
    edges = deadlocks.pool_holders(threads, snaps)
    assert [(e.waiter, e.owner) for e in edges] == [(1, 2), (1, 3)]
    assert edges[0].facts.pool.pool == POOL and edges[0].kind == WaitKind.PY_QUEUE_GET


def test_the_barriers_waiters_wait_on_the_parties_that_have_not_arrived():
    threads = [_waiting(2, WaitKind.PY_BARRIER, 0x200, [1, 2, 3, 7]), _waiting(3, WaitKind.PY_BARRIER, 0x200),
               _waiting(1, WaitKind.PY_QUEUE_GET, 0x100),
               _waiting(7, WaitKind.PY_JOIN, None, owners=[1])]   # main joins thread 1: it comes after it
    edges = deadlocks.barrier_parties(threads)
    assert sorted((e.waiter, e.owner) for e in edges) == [(2, 1), (3, 1)]
    assert to_data(edges[0].facts) == {"party": True, "parties": 3, "waiting": 2}


def test_a_barrier_nobody_else_reaches_names_no_party():
    assert deadlocks.barrier_parties([_waiting(2, WaitKind.PY_BARRIER, 0x200, [2]),
                                      _waiting(3, WaitKind.PY_BARRIER, 0x200)]) == []
    assert deadlocks.barrier_parties([_waiting(2, WaitKind.PY_BARRIER, 0x200, None)]) == []


def _local(name, type_, address):
    return LocalValue(name=name, kind="local", address=address, type=type_)


def test_a_redis_connection_is_held_for_the_pool_its_frame_names_and_only_that_one():
    # Redis.execute_command's frame: `pool` (the BlockingConnectionPool) and `conn` (its connection)
    frame = [_local("self", "Redis", 0x10), _local("pool", "BlockingConnectionPool", POOL),
             _local("conn", "Connection", 0x20)]
    assert [(v.name, pool) for v, pool in python_api.frame_pool_holdings(frame, {POOL})] == [("conn", POOL)]
    # a frame whose pool is another one holds nothing of this pool; a frame without a pool local neither
    assert python_api.frame_pool_holdings(frame, {OTHER}) == []
    assert python_api.frame_pool_holdings([_local("conn", "Connection", 0x20)], {POOL}) == []


def test_redis_pools_checkout_is_the_blocking_pools_only():
    checkout = next(c for c in python_api.POOL_CHECKOUTS if c[0] == "/redis/connection.py")
    assert checkout[2] == ("BlockingConnectionPool",)   # ConnectionPool.get_connection never waits

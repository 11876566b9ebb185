"""Connection pools and Barriers name who can end their waits (pyhang.analysis.deadlocks.pool_holders,
barrier_parties): a checkout waits on the threads holding that pool's connections; a Barrier's waiters on
the threads that reach it and have not arrived (not those whose own recorded wait is on another of
them); a pool whose queue another thread's connection can refill is never "nothing can wake".
Synthetic facts."""
from pyhang.analysis import deadlocks
from pyhang.model.kinds import WaitKind
from pyhang.model.report import BlockedOn, ThreadReport
from pyhang.model.snapshot import ThreadSnapshot
from pyhang.model.waits import ApiDetail

POOL, OTHER = 0x5000, 0x6000


def _conn(pool):
    return {"address": 0x9000 + pool, "name": "conn", "type": "Connection", "pool": pool,
            "frame": {"function": "handler", "file": "app.py", "line": 9}}


def _waiting(tid, kind, address, referenced_by=None, owners=()):
    return ThreadReport(tid=tid, gdb_num=tid, blocked_on=BlockedOn(
        kind=kind, address=address, owners=list(owners),
        api=ApiDetail(referenced_by=referenced_by, values={"_parties": 3, "_count": 2})))


def test_a_checkout_waits_on_the_threads_holding_that_pools_connections_only():
    threads = [_waiting(1, WaitKind.PY_QUEUE_GET, 0x100), _waiting(2, WaitKind.PY_BARRIER, 0x200),
               _waiting(3, WaitKind.PY_BARRIER, 0x200), _waiting(4, WaitKind.PY_EVENT, 0x300)]
    snaps = [ThreadSnapshot(num=1, tid=1, pool_checkout={"pool": POOL, "type": "QueuePool", "frame": None}),
             ThreadSnapshot(num=2, tid=2, connections=[_conn(POOL)]),
             ThreadSnapshot(num=3, tid=3, connections=[_conn(POOL)]),
             ThreadSnapshot(num=4, tid=4, connections=[_conn(OTHER)])]
    edges = deadlocks.pool_holders(threads, snaps)
    assert [(e.waiter, e.owner) for e in edges] == [(1, 2), (1, 3)]
    assert edges[0].facts["pool"]["pool"] == POOL and edges[0].kind == WaitKind.PY_QUEUE_GET


def test_the_barriers_waiters_wait_on_the_parties_that_have_not_arrived():
    threads = [_waiting(2, WaitKind.PY_BARRIER, 0x200, [1, 2, 3, 7]), _waiting(3, WaitKind.PY_BARRIER, 0x200),
               _waiting(1, WaitKind.PY_QUEUE_GET, 0x100),
               _waiting(7, WaitKind.PY_JOIN, None, owners=[1])]   # main joins thread 1: it comes after it
    edges = deadlocks.barrier_parties(threads)
    assert sorted((e.waiter, e.owner) for e in edges) == [(2, 1), (3, 1)]
    assert edges[0].facts == {"party": True, "parties": 3, "waiting": 2}


def test_a_barrier_nobody_else_reaches_names_no_party():
    assert deadlocks.barrier_parties([_waiting(2, WaitKind.PY_BARRIER, 0x200, [2]),
                                      _waiting(3, WaitKind.PY_BARRIER, 0x200)]) == []
    assert deadlocks.barrier_parties([_waiting(2, WaitKind.PY_BARRIER, 0x200, None)]) == []

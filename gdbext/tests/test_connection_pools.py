"""Connection pools name their holders, live and from a core (Debian's python3-sqlalchemy 1.4, packaged
for python3.11 only): a QueuePool exhausted (pool_size=2, max_overflow=0) whose two holders wait at a
threading.Barrier for the third party, which waits in the pool's checkout
(testdata/scenarios/sa_pool_exhausted.py).  The checkout waits on the threads whose frames hold the
pool's connections (found from their locals: a Connection whose _ConnectionFairy's pool is the one the
checkout's frame waits in), the Barrier's waiters on the party that has not arrived: a likely deadlock,
never "a Queue.get nothing can fill".  The same for urllib3's pools (block=True) and redis-py's
BlockingConnectionPool (against a real redis-server, testdata/servers.py): the checkout waits on the thread
holding the only connection, which waits on the server: exit 4.  On Debian 12's packages for its 3.11
(SQLAlchemy 1.4, urllib3 1.26, redis-py 4.3) and Debian unstable's for its 3.14 (SQLAlchemy 2.0, whose
_ConnectionFairy keeps its pool in a __slots__ member; urllib3 2; redis-py 6.4) in a root file system of their
own (containers.LIBRARY_ROOTS: sid-services).  As a tree: the QueuePool's is the deadlock within the process
(exit 3); the redis pool's holder waits on the redis-server, a process outside the tree (exit 4); urllib3's
streamer waits on the upstream, a child in the tree that waits in accept for a connection nobody makes: a
stall (exit 5), never a cycle.

psycopg2's own pools (psycopg2.pool.SimpleConnectionPool, ThreadedConnectionPool) never wait for a
connection: an exhausted pool raises PoolError at once, so there is no checkout to name holders for."""

import pytest

import harness

INTERPRETERS = [pytest.param(path, id=name) for name, path in harness.services_interpreters()]


@pytest.fixture(scope="module", params=INTERPRETERS)
def exhausted(request):
    with harness.python_scenario(request.param, "sa_pool_exhausted.py") as s:
        yield s


def check(s, status, doc):
    roles = {t["role"]: t["tid"] for t in s.truth["threads"]}
    holders, waiter = sorted([roles["holder-1"], roles["holder-2"]]), roles["checkout"]
    # THEN the checkout waits on both holders, through the pool the scenario made
    pool = [e for e in doc["edges"] if e["facts"].get("pool")]
    assert sorted(e["owner"] for e in pool) == holders and {e["waiter"] for e in pool} == {waiter}
    assert all(e["facts"]["pool"]["pool"] == s.truth["pool"] and e["facts"]["pool"]["type"] == "QueuePool"
               and [c["name"] for c in e["facts"]["connections"]] == ["conn"] for e in pool)
    # AND each holder at the Barrier waits on the party that has not arrived: the checkout thread
    party = [e for e in doc["edges"] if e["facts"].get("party")]
    assert sorted(e["waiter"] for e in party) == holders and {e["owner"] for e in party} == {waiter}
    assert all(e["address"] == s.truth["barrier"] for e in party)
    # AND one likely deadlock for their component, no "nothing can wake" for the pool's queue
    (d,) = doc["deadlocks"]
    assert d["confidence"] == "likely" and d["component"]["threads"] == sorted(holders + [waiter])
    assert "pool" in d["advice"]
    assert [v for v in doc["verdicts"] if v["kind"] == "nothing-can-wake"] == []
    assert status == 3 and doc["headline"] == "Found one deadlock (likely)."


def test_an_exhausted_queuepool_names_its_holders_and_the_barrier_its_missing_party_live(exhausted):
    status, doc = harness.report_doc("-p", exhausted.pid)
    check(exhausted, status, doc)


def test_the_same_from_a_core(exhausted):
    python = exhausted.argv[0]
    status, doc = harness.report_doc(*harness.core_options(python), exhausted.gcore(), python)
    check(exhausted, status, doc)


def test_the_tree_of_the_exhausted_pool_is_the_deadlock_within_its_process_none_across_exit_3(exhausted):
    status, doc = harness.tree_doc(exhausted.pid)
    (process,) = doc["processes"]
    check(exhausted, process["exit_status"], process)
    assert harness.tree_pids(doc) == [exhausted.pid] and doc["deadlocks"] == [] and doc["stalls"] == []
    assert status == 3 and doc["headline"] == "Found a deadlock within PID %d (its report is below); none across " \
                                              "processes." % exhausted.pid


@pytest.fixture(scope="module", params=INTERPRETERS)
def blocking_pool(request):
    with harness.python_scenario(request.param, "urllib3_pool_block.py") as s:
        yield s


def test_a_blocking_urllib3_pools_checkout_waits_on_the_thread_streaming_from_its_only_connection(blocking_pool):
    s = blocking_pool
    roles = {t["role"]: t["tid"] for t in s.truth["threads"]}
    status, doc = harness.report_doc("-p", s.pid)
    # THEN the checkout waits on the streamer, which holds the pool's connection in its frames (`r`, the
    # HTTPResponse whose _pool is the pool)
    (e,) = [e for e in doc["edges"] if e["facts"].get("pool")]
    assert (e["waiter"], e["owner"]) == (roles["checkout"], roles["streamer"])
    assert e["facts"]["pool"]["pool"] == s.truth["pool"] and e["facts"]["pool"]["type"] == "HTTPConnectionPool"
    assert [c["type"] for c in e["facts"]["connections"]] == ["HTTPResponse"]
    accounts = {t["tid"]: t["account"] for t in doc["threads"]}
    assert accounts[roles["checkout"]]["state"] == "blocked" and accounts[roles["checkout"]]["threads"] == \
        [roles["streamer"]]
    # AND the streamer waits on the upstream process; no "nothing can wake", no deadlock: exit 4
    assert accounts[roles["streamer"]]["state"] == "elsewhere" and accounts[roles["streamer"]]["pids"] == \
        [s.truth["upstream"]]
    assert [v for v in doc["verdicts"] if v["kind"] == "nothing-can-wake"] == [] and doc["deadlocks"] == []
    assert status == 4 and doc["headline"].startswith("Waits on PID %d" % s.truth["upstream"])


def test_the_tree_of_the_blocking_urllib3_pool_is_a_stall_on_the_upstream_child_never_a_cycle_exit_5(blocking_pool):
    s = blocking_pool
    roles = {t["role"]: t["tid"] for t in s.truth["threads"]}
    status, doc = harness.tree_doc(s.pid)
    # THEN the upstream is in the tree, as the program's child: the streamer's wait is on it, not outside
    assert harness.tree_pids(doc) == [s.pid, s.truth["upstream"]] and doc["outside"] == []
    # AND the streamer's recv is a stall: the upstream's only thread waits in accept, serving nothing now
    (stall,) = doc["stalls"]
    assert (stall["waiter_pid"], stall["waiter"]) == (s.pid, roles["streamer"])
    assert [h["pid"] for h in stall["holders"]] == [s.truth["upstream"]]
    assert [t["syscall"] in ("accept", "accept4") for h in stall["holders"] for t in h["threads"]] == [True]
    # AND no invented cycle across the processes: exit 5 (hung), never 0
    assert doc["deadlocks"] == []
    assert status == 5 and doc["headline"] == "Hung without a deadlock: 1 thread waits on a pipe or socket " \
                                              "nothing serves now."
    # AND no invented fork hazard: the upstream was forked before any thread started (its memory holds no
    # descriptor of a thread that ran at fork), though its parent has three threads now
    assert doc["fork_hazards"] == [] and [h for p in doc["processes"] for h in p.get("fork_hazards", [])] == []
    _, text, _ = harness.pyhang_cli("report", "--tree", "--once", "-p", s.pid)
    assert "Fork hazard" not in text, text[:1500]


@pytest.fixture(scope="module", params=INTERPRETERS)
def redis_pool(request, redis_server):
    with harness.python_scenario(request.param, "redis_pool_block.py",
                                 env={"PYHANG_REDIS_PORT": str(redis_server.port)}) as s:
        yield s


def test_an_exhausted_redis_blocking_pools_checkout_waits_on_the_thread_whose_command_holds_its_connection(
        redis_pool, redis_server):
    s = redis_pool
    roles = {t["role"]: t["tid"] for t in s.truth["threads"]}
    status, doc = harness.report_doc("--once", "-p", s.pid)
    # THEN the checkout waits on the thread running BLPOP, whose execute_command frame holds the pool's
    # connection (`conn`, in the frame whose `pool` is the pool the checkout waits in)
    (e,) = [e for e in doc["edges"] if e["facts"].get("pool")]
    assert (e["waiter"], e["owner"]) == (roles["checkout"], roles["blpop"])
    assert e["facts"]["pool"]["pool"] == s.truth["pool"] and e["facts"]["pool"]["type"] == "BlockingConnectionPool"
    # (redis-py 4.3's execute_command; 6.4's _execute_command, which execute_command retries through)
    assert [(c["name"], c["type"], c["frame"]["function"]) for c in e["facts"]["connections"]] in \
        ([("conn", "Connection", "Redis.execute_command")], [("conn", "Connection", "Redis._execute_command")])
    # AND the holder waits on the redis-server: no "nothing can wake", no deadlock, exit 4
    accounts = {t["tid"]: t["account"] for t in doc["threads"]}
    assert accounts[roles["checkout"]]["state"] == "blocked" and \
        accounts[roles["checkout"]]["threads"] == [roles["blpop"]]
    assert accounts[roles["blpop"]]["state"] == "elsewhere" and accounts[roles["blpop"]]["pids"] == [redis_server.pid]
    (w,) = [v for v in doc["verdicts"] if v["kind"] == "waits-on-process"]
    assert [(x["tid"], x["fd"]) for x in w["facts"]["waits"]] == [(roles["blpop"], s.truth["fd"])]
    assert [v for v in doc["verdicts"] if v["kind"] == "nothing-can-wake"] == [] and doc["deadlocks"] == []
    assert status == 4 and doc["headline"].startswith("Waits on PID %d" % redis_server.pid)


def test_the_tree_of_the_exhausted_redis_pool_names_the_redis_server_as_a_process_outside_it_exit_4(
        redis_pool, redis_server):
    s = redis_pool
    roles = {t["role"]: t["tid"] for t in s.truth["threads"]}
    status, doc = harness.tree_doc(s.pid)
    # THEN the holder's BLPOP is the one wait outside the tree, on the redis-server; the checkout waits on it
    assert harness.tree_pids(doc) == [s.pid]
    assert [(w["tid"], w["pids"]) for w in doc["outside"]] == [(roles["blpop"], [redis_server.pid])]
    assert doc["outside"][0]["peers"][0]["comm"] == "redis-server"
    (process,) = doc["processes"]
    accounts = {t["tid"]: t["account"] for t in process["threads"]}
    assert accounts[roles["checkout"]]["state"] == "blocked" and accounts[roles["checkout"]]["threads"] == \
        [roles["blpop"]]
    assert doc["deadlocks"] == [] and doc["stalls"] == []
    assert status == 4 and doc["headline"].startswith("Not accounted for: waits on a process outside the tree")

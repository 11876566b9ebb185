"""Waits on a server, against real servers (testdata/servers.py: a PostgreSQL 15 and a redis-server 7.0
of Debian's packages, each on its own loopback port and data directory, one of each for this module,
stopped by pid), with Debian 12's python3-psycopg2 2.9.5 and python3-redis 4.3 on its 3.11, and Debian
unstable's (psycopg2 2.9.13 with libpq 18, redis-py 6.4) on its 3.14 in a root file system of their own
(containers.LIBRARY_ROOTS: sid-services); the servers stay the host's, on loopback.

A psycopg2 row-lock hang (testdata/scenarios/pg_row_lock.py): the waiting query's thread is a wait on
its backend named with its process title (`UPDATE waiting`), and with the other thread's session
`idle in transaction` and that thread waiting on an Event the waiter reaches, a likely deadlock through
the database, never certain; the link points at the thread whose connection's backend (the backend PID its
PGconn holds) is the session `idle in transaction`, its connection's status (inside a transaction) as
corroboration, never at a third one whose connection is outside any.  A redis BLPOP nothing will push to (redis_blpop.py): a wait on the
redis-server, exit 4.  From a core gdb wrote (no fd table) the socket's peer is unknown: exit 4, never
an all-clear; from a core `pyhang gcore` wrote, the live answer.  As a tree: the row lock is the
deadlock within the process (exit 3, none across processes: the server is outside the tree), the BLPOP a
wait on the redis-server, named as a process outside the tree (exit 4)."""
import os

import pytest

import harness

INTERPRETERS = [pytest.param(path, id=name) for name, path in harness.services_interpreters()]


@pytest.fixture(scope="module", params=INTERPRETERS)
def row_lock(request, postgres):
    with harness.python_scenario(request.param, "pg_row_lock.py", env={"PYHANG_PG_DSN": postgres.dsn()}) as s:
        yield s


@pytest.fixture(scope="module", params=INTERPRETERS)
def blpop(request, redis_server):
    with harness.python_scenario(request.param, "redis_blpop.py",
                                 env={"PYHANG_REDIS_PORT": str(redis_server.port)}) as s:
        yield s


def core_report(s, core):
    """report_doc of a core of scenario `s`, with the options its interpreter's cores need (a root's sysroot)."""
    return harness.report_doc(*harness.core_options(s.argv[0]), core, s.argv[0])


def thread(doc, tid):
    return next(t for t in doc["threads"] if t["tid"] == tid)


def _role(s, role):
    return next(t for t in s.truth["threads"] if t["role"] == role)


def _backend_title(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return f.read().replace(b"\0", b" ").decode().strip()


def test_the_hang_happened_in_the_server_the_backends_say_waiting_and_idle_in_transaction(row_lock):
    # the server's own view, before pyhang's: the premise of the tests below
    assert _backend_title(_role(row_lock, "waits-row")["backend"]).endswith("UPDATE waiting")
    assert _backend_title(_role(row_lock, "holds-row")["backend"]).endswith("idle in transaction")
    assert _backend_title(_role(row_lock, "idle-conn")["backend"]).endswith(" idle")


def check_row_lock(s, status, doc):
    a, b = _role(s, "holds-row"), _role(s, "waits-row")
    # THEN one likely deadlock of the two threads, through the database: never certain
    (d,) = doc["deadlocks"]
    assert sorted(d["threads"]) == sorted([a["tid"], b["tid"]]) and d["confidence"] == "likely"
    (db,) = [e for e in d["edges"] if e["facts"].get("database")]
    assert (db["waiter"], db["owner"]) == (b["tid"], a["tid"]) and db["source"] == "heuristic"
    # AND only to the thread whose connection is inside a transaction (psycopg2's connection.status, read from
    # its C type's member table): never to the one holding a connection outside any transaction
    assert [e["owner"] for e in doc["edges"] if e["facts"].get("database")] == [a["tid"]]
    assert [(c["status"], c["closed"]) for c in db["facts"]["connections"]] == [(2, 0)]
    assert db["facts"]["database"]["pid"] == b["backend"]
    assert db["facts"]["database"]["title"].endswith("UPDATE waiting")
    (tx,) = db["facts"]["open_transactions"]
    assert tx["pid"] == a["backend"] and tx["state"] == "idle in transaction"
    assert [c["name"] for c in db["facts"]["connections"]] == ["conn"]
    # AND the link rests on the socket's other end: the holder's connection is connected to the backend whose
    # title says `idle in transaction` (the backend PID its PGconn holds), its status agreeing
    assert [c["backend_pid"] for c in db["facts"]["connections"]] == [a["backend"]]
    assert db["facts"]["backend"]["pid"] == a["backend"] and db["facts"]["status_agrees"] is True
    assert "(PID %d, the connection's own) says `idle in transaction`" % a["backend"] in db["evidence"]
    (event,) = [e for e in d["edges"] if e["facts"].get("reaches_object")]
    assert (event["waiter"], event["owner"], event["kind"]) == (a["tid"], b["tid"], "py-event")
    assert "lock_timeout" in d["advice"]
    # AND the waiter's wait on its backend is said with the backend's title
    (w,) = [v for v in doc["verdicts"] if v["kind"] == "waits-on-process"]
    (wait,) = w["facts"]["waits"]
    assert wait["tid"] == b["tid"] and wait["pids"] == [b["backend"]] and wait["syscall"] in ("poll", "ppoll")
    assert wait["peers"][0]["title"].endswith("UPDATE waiting") and "UPDATE waiting" in w["text"]
    assert status == 3 and doc["headline"] == "Found one deadlock (likely)."


def test_a_row_lock_held_across_a_wait_in_the_program_is_a_likely_deadlock_through_the_database(row_lock):
    status, doc = harness.report_doc("-p", row_lock.pid)
    check_row_lock(row_lock, status, doc)


def test_a_pyhang_gcore_core_of_the_row_lock_hang_gives_the_live_answer(row_lock):
    core = os.path.join(row_lock.tmp, "core.pyhang.%d" % row_lock.pid)
    status, out, err = harness.pyhang_cli("gcore", "-p", row_lock.pid, "-o", core)
    assert status == 0, err
    status, doc = core_report(row_lock, core)
    check_row_lock(row_lock, status, doc)


def test_the_tree_of_the_row_lock_hang_is_the_deadlock_within_the_process_none_across_exit_3(row_lock, postgres):
    status, doc = harness.tree_doc(row_lock.pid)
    # THEN the tree holds the program alone (the server is no child of it), and its report is the live one
    assert harness.tree_pids(doc) == [row_lock.pid]
    (process,) = doc["processes"]
    check_row_lock(row_lock, process["exit_status"], process)
    # AND no deadlock across processes is made of it: the database cycle is the process's own, likely
    assert doc["deadlocks"] == [] and doc["stalls"] == []
    assert status == 3 and doc["headline"] == "Found a deadlock within PID %d (its report is below); none across " \
                                              "processes." % row_lock.pid


def test_a_blpop_nothing_pushes_to_waits_on_the_redis_server_named_exit_4(blpop, redis_server):
    status, doc = harness.report_doc("-p", blpop.pid)
    t = _role(blpop, "blpop")
    (w,) = [v for v in doc["verdicts"] if v["kind"] == "waits-on-process"]
    (wait,) = w["facts"]["waits"]
    assert (wait["tid"], wait["syscall"], wait["fd"], wait["pids"]) == (t["tid"], "recvfrom", t["fd"],
                                                                        [redis_server.pid])
    assert wait["peers"] == [{"pid": redis_server.pid, "comm": "redis-server",
                              "title": "/usr/bin/redis-server 127.0.0.1:%d" % redis_server.port}]
    assert thread(doc, t["tid"])["account"]["state"] == "elsewhere"
    assert status == 4 and doc["headline"].startswith("Waits on PID %d" % redis_server.pid)
    assert doc["deadlocks"] == []


def test_a_socket_wait_from_a_core_without_an_fd_table_has_its_peer_unknown_exit_4(blpop):
    core = harness.gcore(blpop.pid, blpop.tmp)   # as gdb's gcore writes it: no record of /proc
    status, doc = core_report(blpop, core)
    t = _role(blpop, "blpop")
    account = thread(doc, t["tid"])["account"]
    assert account["state"] == "unaccounted" and account["reason"] == "no-fd-table"
    assert status == 4 and doc["headline"] != "No deadlock found."


def test_the_tree_of_a_blpop_names_the_redis_server_as_a_process_outside_it_exit_4(blpop, redis_server):
    status, doc = harness.tree_doc(blpop.pid)
    t = _role(blpop, "blpop")
    # THEN the one unaccounted wait is the BLPOP's, on the redis-server, said as outside the tree
    assert harness.tree_pids(doc) == [blpop.pid]
    assert doc["unaccounted"] == [{"pid": blpop.pid, "tid": t["tid"]}]
    (out,) = doc["outside"]
    assert (out["pid"], out["tid"], out["pids"]) == (blpop.pid, t["tid"], [redis_server.pid])
    assert [(p["pid"], p["comm"]) for p in out["peers"]] == [(redis_server.pid, "redis-server")]
    # AND no invented cycle or stall, exit 4 (never an all-clear: the tree cannot look into the server)
    assert doc["deadlocks"] == [] and doc["stalls"] == []
    assert status == 4 and doc["headline"].startswith(
        "Not accounted for: waits on a process outside the tree, which pyhang does not look into: PID %d LWP %d on "
        "PID %d (redis-server `/usr/bin/redis-server 127.0.0.1:%d`)" % (blpop.pid, t["tid"], redis_server.pid,
                                                                        redis_server.port))

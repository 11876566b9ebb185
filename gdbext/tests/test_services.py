"""Waits on a server, against real servers (testdata/servers.py: a PostgreSQL 15 and a redis-server 7.0
of Debian's packages, each on its own loopback port and data directory, one of each for this module,
stopped by pid), with Debian's python3-psycopg2 and python3-redis (packaged for python3.11 only).

A psycopg2 row-lock hang (testdata/scenarios/pg_row_lock.py): the waiting query's thread is a wait on
its backend named with its process title (`UPDATE waiting`), and with the other thread's session
`idle in transaction` and that thread waiting on an Event the waiter reaches, a likely deadlock through
the database, never certain; the link points at the thread whose connection is inside a transaction,
never at a third one whose connection is outside any.  A redis BLPOP nothing will push to (redis_blpop.py): a wait on the
redis-server, exit 4.  From a core gdb wrote (no fd table) the socket's peer is unknown: exit 4, never
an all-clear; from a core `pyhang gcore` wrote, the live answer."""
import os

import pytest

import harness

PY = "/usr/bin/python3.11"


@pytest.fixture(scope="module")
def row_lock(postgres):
    with harness.python_scenario(PY, "pg_row_lock.py", env={"PYHANG_PG_DSN": postgres.dsn()}) as s:
        yield s


@pytest.fixture(scope="module")
def blpop(redis_server):
    with harness.python_scenario(PY, "redis_blpop.py", env={"PYHANG_REDIS_PORT": str(redis_server.port)}) as s:
        yield s


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
    status, doc = harness.report_doc(core, PY)
    check_row_lock(row_lock, status, doc)


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
    status, doc = harness.report_doc(core, PY)
    t = _role(blpop, "blpop")
    account = thread(doc, t["tid"])["account"]
    assert account["state"] == "unaccounted" and account["reason"] == "no-fd-table"
    assert status == 4 and doc["headline"] != "No deadlock found."

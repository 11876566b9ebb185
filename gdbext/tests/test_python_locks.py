"""lock-owner for Python-level locks on every interpreter (stripped): a
threading.Lock waiter (no owner recorded), an RLock waiter (owner and count
from the lock object), Condition waiters (the Condition and the lock they
must reacquire), live and from the core."""
import os

import pytest

import harness

INTERPRETERS = harness.interpreters()


@pytest.fixture(scope="module", params=INTERPRETERS, ids=[n for n, _ in INTERPRETERS])
def python(request):
    return harness.stripped_interpreter(request.param[1])


def check(report, truth):
    threads = {t["tid"]: t for t in report["threads"]}
    for t in truth["threads"]:
        b = threads[t["tid"]]["blocked_on"]
        role = t["role"]
        if role == "lock-waiter":
            assert b["kind"] == "py-lock" and b["address"] == t["lock_id"], b
            assert b["owners"] == [] and b["owner_source"] == "unknown"
        elif role == "rlock-waiter":
            assert b["kind"] == "py-rlock" and b["address"] == t["lock_id"], b
            assert b["owners"] == [t["holder_tid"]] and b["owner_source"] == "lock-word"
            assert b["owner_alive"] is True
            assert "(locked 2 times)" in b["detail"]
        elif role == "cond-waiter":
            assert b["kind"] == "py-condition" and b["address"] == t["condition_id"], b
            assert ("0x%x" % t["condition_lock_id"]) in b["detail"], b
            if t.get("condition_lock_holder_tid"):
                assert "(LWP %d)" % t["condition_lock_holder_tid"] in b["detail"], b


def test_python_lock_waits_and_owners_live_and_from_core(scenario, python):
    exe, env = python
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "py_locks.py")], env=env)
    check(harness.report_json(pid=s.pid), s.truth)
    check(harness.report_json(executable=exe, core=s.gcore()), s.truth)


def test_rlock_abba_is_a_certain_deadlock(scenario, python):
    # GIVEN two threads deadlocked on two RLocks, which record their owners
    exe, env = python
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"], env=env)
    a = next(x["tid"] for x in s.truth["threads"] if x["role"] == "holds-a-wants-b")
    b = next(x["tid"] for x in s.truth["threads"] if x["role"] == "holds-b-wants-a")
    for report in (harness.report_json(pid=s.pid), harness.report_json(executable=exe, core=s.gcore())):
        # THEN one certain cycle through the RLock owners
        assert len(report["deadlocks"]) == 1
        d = report["deadlocks"][0]
        assert sorted(d["threads"]) == sorted([a, b]) and d["confidence"] == "certain"
        edges = {(e["waiter"], e["owner"]): e for e in d["edges"]}
        assert edges[(a, b)]["kind"] == "py-rlock" and edges[(a, b)]["address"] == s.truth["b"]
        assert edges[(b, a)]["address"] == s.truth["a"]

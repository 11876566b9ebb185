"""lock-owner for Python-level locks on every interpreter (stripped): a
threading.Lock waiter (no owner recorded), an RLock waiter (owner and count
from the lock object), Condition waiters (the Condition and the lock they
must reacquire), live and from the core; the Lock's and the RLock's
holders sleep for an hour holding them: a hang (held-across-sleep, exit 5)
wherever the report knows how long the sleep lasts."""
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


def check_held(report, truth):
    """Each Lock or RLock waiter is named behind its holder's sleep when the report knows how long that sleep
    lasts (live: a deadline against the clock; a relative sleep, time.sleep before 3.11, anywhere), and the
    report says so by its exit status; a core gdb wrote records no clock for a deadline."""
    threads = {t["tid"]: t for t in report["threads"]}
    held = {v["facts"]["holder"]: v for v in report["verdicts"] if v["kind"] == "held-across-sleep"}
    for t in truth["threads"]:
        if t["role"] not in ("lock-waiter", "rlock-waiter"):
            continue
        sleep = threads[t["holder_tid"]]["blocked_on"]["syscall"]
        if sleep.get("left_ns") is not None or not sleep.get("absolute"):
            assert t["tid"] in held[t["holder_tid"]]["facts"]["waiters"], report["verdicts"]
            assert threads[t["tid"]]["account"]["state"] == "hung"
        else:
            assert t["holder_tid"] not in held and report["target"]["kind"] == "core"
    assert set(held) <= {t["holder_tid"] for t in truth["threads"] if t.get("holder_tid")}
    assert report["exit_status"] == (5 if held else 0), report["verdicts"]


def test_python_lock_waits_and_owners_live_and_from_core(scenario, python):
    exe, env = python
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "py_locks.py")], env=env)
    live = harness.report_json(pid=s.pid)
    check(live, s.truth)
    check_held(live, s.truth)
    assert live["exit_status"] == 5   # a live report always knows how long a sleep lasts
    core = harness.report_json(executable=exe, core=s.gcore())
    check(core, s.truth)
    check_held(core, s.truth)


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

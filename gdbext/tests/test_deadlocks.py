"""pyhang report finds every deadlock cycle — native locks, the GIL, and
driver-style locks through a ctypes callback — says how sure it is, and
reports none where there is none.  Each live and from the core."""
import os

import pytest

import harness

DEBIAN = "/usr/bin/python3.11"


def interpreters_for_deadlocks():
    """Debian's python3.11, pyenv's 3.8 and 3.13 (stripped), and today's Debian
    interpreters in their roots (3.13.5, 3.14, 3.15), when present."""
    chosen = []
    for name, path in harness.interpreters():
        if name == "debian-3.11" or name.startswith(("pyenv-3.8.", "pyenv-3.13.", "debian-sid-", "debian-trixie-")):
            chosen.append(pytest.param(path, id=name))
    return chosen


def reports(s, executable):
    """The report of the live process, then of its core."""
    return harness.live_and_core_reports(s, executable)


def test_native_abba_mutexes_are_one_certain_deadlock(scenario):
    # GIVEN two C threads that took two mutexes in opposite orders
    s = scenario([harness.fixture_path("prog_abba")])
    t = s.truth
    ab = next(x["tid"] for x in t["threads"] if x["role"] == "holds-a-wants-b")
    ba = next(x["tid"] for x in t["threads"] if x["role"] == "holds-b-wants-a")
    for where, report in reports(s, harness.fixture_path("prog_abba")):
        # THEN exactly one certain cycle, each edge from the lock word
        assert len(report["deadlocks"]) == 1, where
        d = report["deadlocks"][0]
        assert sorted(d["threads"]) == sorted([ab, ba]) and d["confidence"] == "certain"
        edges = {(e["waiter"], e["owner"]): e for e in d["edges"]}
        assert edges[(ab, ba)]["address"] == t["b"] and edges[(ab, ba)]["kind"] == "mutex"
        assert edges[(ba, ab)]["address"] == t["a"]
        assert {e["source"] for e in d["edges"]} == {"lock-word"}


@pytest.mark.parametrize("python", interpreters_for_deadlocks())
@pytest.mark.parametrize("mode,confidence", [("w", "certain"), ("r", "likely")])
def test_gil_and_driver_rwlock_through_a_ctypes_callback(scenario, python, mode, confidence):
    # GIVEN case 5 with a fixture driver library: main holds the GIL and waits
    # for the driver's rwlock; the worker holds the rwlock (write, or read) and
    # waits for the GIL in a ctypes callback called by the driver
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "driver_deadlock.py"),
                  harness.fixture_path("libdriverfixture.so"), mode], env=env)
    main = next(x["tid"] for x in s.truth["threads"] if x["role"] == "holds-gil")
    worker = next(x["tid"] for x in s.truth["threads"] if x["role"] == "holds-driver-lock")
    text, _ = harness.run_gdb_marked("pyhang report", pid=s.pid)  # (before a core that may end the process)
    for where, report in reports(s, exe):
        # THEN one deadlock mixing the GIL and the native lock, as sure as the evidence allows
        assert len(report["deadlocks"]) == 1, (where, report["deadlocks"], report["edges"])
        d = report["deadlocks"][0]
        assert d["confidence"] == confidence, where
        edges = {(e["waiter"], e["owner"]): e for e in d["edges"]}
        main_wait = edges[(main, worker)]
        assert main_wait["kind"] == "rwlock-write" and main_wait["address"] == s.truth["lock"]
        assert main_wait["source"] == ("lock-word" if mode == "w" else "heuristic")
        if mode == "r":
            assert "PyGILState_Ensure" in main_wait["evidence"] or "waits for the GIL" in main_wait["evidence"]
        assert edges[(worker, main)]["kind"] == "gil" and edges[(worker, main)]["source"] == "gil-state"
    assert text.split("\n")[3].startswith("Found one deadlock (%s), 2 threads:" % confidence), text[:600]


@pytest.mark.parametrize("python", interpreters_for_deadlocks())
def test_python_lock_abba_is_a_likely_deadlock_never_a_certain_one(scenario, python):
    # GIVEN two threads deadlocked on two threading.Lock objects, which record no owner
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "Lock"], env=env)
    waiters = [x["tid"] for x in s.truth["threads"] if x["role"] != "main"]
    for where, report in reports(s, exe):
        threads = {t["tid"]: t for t in report["threads"]}
        # THEN both are blocked with no recorded owner
        for tid in waiters:
            b = threads[tid]["blocked_on"]
            assert b is not None and b["kind"] == "py-lock" and b["owners"] == [], (where, b)
        # AND the cycle through the threads that reference each lock is likely, never certain
        (d,) = report["deadlocks"]
        assert d["confidence"] == "likely" and sorted(d["threads"]) == sorted(waiters), where
        assert {e["source"] for e in d["edges"]} == {"heuristic"}, where
        assert all("lock_abba.py" in e["evidence"] for e in d["edges"]), (where, d["edges"])


def test_busy_healthy_process_has_no_deadlock(scenario):
    s = scenario([DEBIAN, "-u", os.path.join(harness.SCENARIOS, "gil_contention.py"), "4"])
    for where, report in reports(s, DEBIAN):
        assert report["deadlocks"] == [], where
        # (a busy process may be stopped while one thread hands the GIL to another: said as that)
        assert not [v for v in report["verdicts"] if v["kind"] not in ("gil-holder-blocked", "gil-handover")], where


def test_pthread_join_waits_for_the_joined_thread(scenario):
    # GIVEN main joined a thread that is itself deadlocked
    s = scenario([harness.fixture_path("prog_abba")])
    ab = next(x["tid"] for x in s.truth["threads"] if x["role"] == "holds-a-wants-b")
    report = harness.report_json(pid=s.pid)
    main = next(t for t in report["threads"] if t["tid"] == s.pid)
    # THEN its wait names the joined thread, found from the tid word it sleeps on
    assert main["blocked_on"]["kind"] == "thread-join"
    assert main["blocked_on"]["owners"] == [ab]
    assert len(report["deadlocks"]) == 1  # joining a deadlocked thread adds no cycle

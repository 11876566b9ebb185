"""Python-level waits name who they wait for: Thread.join names the joined
thread (its LWP and threading name) on every version, interpreter exit
joining a non-daemon thread says so (3.13 too, where it joins in C), every
thread carries its threading name, and a threading.Lock's likely holder is
the thread inside `with lock:` — a likely deadlock, never a certain one; an
import lock and an RLock held crosswise, both recording their owners, are a
certain one.
Live and from the core."""
import os

import pytest

import harness


def reports(s, exe):
    return harness.live_and_core_reports(s, exe)


@pytest.mark.parametrize("python", harness.interpreter_params())
def test_lock_held_across_join_is_a_likely_deadlock_naming_both_threads(scenario, python):
    # GIVEN main inside `with config_lock:` joining a worker that waits for config_lock
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "lock_join.py"), "with"], env=env)
    main, worker = harness.role_tid(s, "holds-lock-joins"), harness.role_tid(s, "waits-for-lock")
    for where, report in reports(s, exe):
        threads = {t["tid"]: t for t in report["threads"]}
        # THEN main's join names the worker, for certain, from the Thread object it joins
        join = threads[main]["blocked_on"]
        assert join["kind"] == "py-join" and join["owners"] == [worker], (where, join)
        assert join["owner_source"] == "thread-object" and join["confidence"] == "certain", where
        assert s.truth["worker_name"] in join["detail"], (where, join["detail"])
        # AND the worker's Lock, which records no owner, is likely held by main, seen inside its `with`
        wait = threads[worker]["blocked_on"]
        assert wait["kind"] == "py-lock" and wait["address"] == s.truth["lock_id"] and wait["owners"] == []
        assert wait["name"] == "__main__.config_lock", (where, wait)  # the global that refers to it
        # AND the cycle is one likely deadlock: a certain join edge and a heuristic lock edge
        (d,) = report["deadlocks"]
        assert d["confidence"] == "likely" and sorted(d["threads"]) == sorted([main, worker]), where
        edges = {(e["waiter"], e["owner"]): e for e in d["edges"]}
        assert edges[(main, worker)]["kind"] == "py-join" and edges[(main, worker)]["source"] == "thread-object"
        lock_edge = edges[(worker, main)]
        assert lock_edge["source"] == "heuristic" and lock_edge["address"] == s.truth["lock_id"]
        assert "lock_join.py" in lock_edge["evidence"] and "in main" in lock_edge["evidence"], lock_edge
        # AND every thread carries its threading name
        assert threads[worker]["python_name"] == s.truth["worker_name"], where
        assert threads[main]["python_name"] == "MainThread", where


@pytest.mark.parametrize("python", harness.interpreter_params())
def test_interpreter_exit_joining_a_stuck_thread_says_so(scenario, python):
    # GIVEN main returned while a non-daemon thread waits on an Event nobody sets
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "lock_join.py"), "exit"], env=env)
    main, worker = harness.role_tid(s, "exits"), harness.role_tid(s, "never-ends")
    new_shutdown = tuple(int(x) for x in s.truth["python"].split(".")[:2]) >= (3, 13)
    for where, report in reports(s, exe):
        threads = {t["tid"]: t for t in report["threads"]}
        # THEN the worker is blocked with nobody known to wake it, said in a verdict
        (v,) = [v for v in report["verdicts"] if v["kind"] == "owners-unknown"]
        assert worker in v["threads"], (where, v)
        assert threads[worker]["python_name"] == s.truth["worker_name"], where
        # AND main waits at interpreter exit for that thread, certain: from the Thread's _tstate_lock it
        # sleeps on (3.6-3.12), or (3.13+, which joins in C, _thread._shutdown, on no Thread object) from
        # the thread_is_exiting event of the Thread's handle its parking-lot entry names
        join = threads[main]["blocked_on"]
        assert join["kind"] == "py-join" and join["owners"] == [worker], (where, join)
        assert "interpreter exit" in join["detail"] and s.truth["worker_name"] in join["detail"], join
        assert join["confidence"] == "certain" and not join["detail"].endswith(" [likely]"), (where, join)
        assert ("_handle" in join["evidence"]) == new_shutdown, (where, join["evidence"])


@pytest.mark.parametrize("python", harness.interpreter_params())
def test_an_import_lock_and_an_rlock_held_crosswise_are_a_certain_deadlock(scenario, python):
    # GIVEN a thread inside a module's top level waiting for an RLock whose holder
    # imports that same module (both locks record their owners)
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "import_cycle.py")], env=env)
    holder, importer = harness.role_tid(s, "holds-config"), harness.role_tid(s, "imports-module")
    for where, report in reports(s, exe):
        threads = {t["tid"]: t for t in report["threads"]}
        # THEN the holder waits for the module's import lock, owned by the importer
        wait = threads[holder]["blocked_on"]
        assert wait["kind"] == "py-import-lock" and wait["owners"] == [importer], (where, wait)
        # AND the importer waits for the RLock, owned by the holder
        wait = threads[importer]["blocked_on"]
        assert wait["address"] == s.truth["config_lock"] and wait["owners"] == [holder], (where, wait)
        # AND the two make one certain deadlock: no edge rests on an inference
        (d,) = report["deadlocks"]
        assert d["confidence"] == "certain" and sorted(d["threads"]) == sorted([holder, importer]), (where, d)
        assert all(e["source"] != "heuristic" for e in d["edges"]), (where, d["edges"])

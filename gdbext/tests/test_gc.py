"""A garbage collection in progress and the thread that runs it: a thread
blocked inside a __del__ that gc.collect() called, on a lock another thread
holds.  The interpreter's gc.collecting flag says a collection runs (3.7+);
the thread is certain where its native stack names the collector's
functions (an interpreter with its symbols), else likely by its __del__
frame (stripped interpreters).  Live and from a core."""
import os

import pytest

import harness

INTERPRETERS = harness.interpreters()


@pytest.fixture(scope="module", params=INTERPRETERS, ids=[name for name, _ in INTERPRETERS])
def python(request):
    return harness.stripped_interpreter(request.param[1])


def tid_of(truth, role):
    return next(t["tid"] for t in truth["threads"] if t["role"] == role)


def version(truth):
    return tuple(int(x) for x in truth["python"].split(".")[:2])


def check(report, truth, confidence, where):
    collector, holder = tid_of(truth, "collector"), tid_of(truth, "holder")
    threads = {t["tid"]: t for t in report["threads"]}
    if version(truth) < (3, 7):   # 3.6 keeps gc.collecting in a static no symbol names
        assert report["gc"] == {"collecting": None, "threads": []}, where
        return
    assert report["gc"] == {"collecting": True, "threads": [collector]}, where
    run = threads[collector]["gc"]
    assert run["confidence"] == confidence, (where, run)
    if confidence == "likely":
        assert run["finalizer_frame"] == 0 and run["native_function"] is None, (where, run)
    else:
        assert run["native_function"] and run["native_frame"] > 0 and run["finalizer_frame"] is None
    assert threads[holder]["gc"] is None, where


def test_a_collection_blocked_in_a_finalizer_is_said_with_its_thread_live_and_from_a_core(scenario, python):
    # GIVEN gc.collect() blocked inside a __del__ on a lock another thread holds (stripped interpreters)
    exe, env = python
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "gc_finalizer.py")], env=env)
    assert s.truth["collect_meanwhile"] == 0   # another collect() returned at once: one was running
    # WHEN pyhang reports on it, live and from a core
    # THEN a collection is in progress, run (likely: no symbol names the collector) by the collector
    check(harness.report_json(pid=s.pid), s.truth, "likely", "live")
    check(harness.report_json(executable=exe, core=s.gcore()), s.truth, "likely", "core")
    # AND the text report says so under the thread, and once for the report
    text, _ = harness.run_gdb_marked("pyhang report", pid=s.pid)
    if version(s.truth) >= (3, 7):
        collector = tid_of(s.truth, "collector")
        assert "Garbage collection in progress, run by Thread" in text and "(LWP %d) (likely)" % collector in text
        assert "garbage collection: likely this thread runs it" in text


def test_an_interpreter_with_its_symbols_names_the_collector_function(scenario):
    # GIVEN the same hang on pyenv's 3.12 as built, with its symbol table
    found = [path for name, path in harness.interpreters(today=False) if name.startswith("pyenv-3.12")]
    if not found:
        pytest.skip("no pyenv 3.12 here")
    s = scenario([found[0], "-u", os.path.join(harness.SCENARIOS, "gc_finalizer.py")])
    # THEN the collector runs it for certain: its native stack has the collection's own function
    report = harness.report_json(pid=s.pid)
    check(report, s.truth, "certain", "live")
    run = next(t for t in report["threads"] if t["gc"])["gc"]
    assert run["native_function"] in ("gc_collect_main", "gc_collect_impl", "_PyGC_Collect"), run


def test_a_process_not_collecting_says_so(scenario):
    s = scenario(["/usr/bin/python3.11", "-u", os.path.join(harness.SCENARIOS, "parked_threads.py"), "2", "1"])
    report = harness.report_json(pid=s.pid)
    assert report["gc"] == {"collecting": False, "threads": []}
    assert all(t["gc"] is None for t in report["threads"])

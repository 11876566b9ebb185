"""Threads spread over subinterpreters (CPython 3.12+): each thread's
Python stack, the interpreter it runs in and its GIL state against its own
interpreter's GIL, live and from a core, on every interpreter present that
has subinterpreters with a GIL of their own (scenarios/subinterpreters.py)."""
import pytest

import harness

SUBINTERPRETERS = [(name, path) for name, path in harness.interpreters()
                   if tuple(map(int, name.rsplit("-", 1)[1].split(".")[:2])) >= (3, 12)]


@pytest.fixture(scope="module", params=SUBINTERPRETERS, ids=[n for n, _ in SUBINTERPRETERS])
def parked(request):
    """(scenario, live report, core report, text report) of one interpreter's run."""
    _, path = request.param
    with harness.python_scenario(path, "subinterpreters.py") as s:
        live = harness.report_json(pid=s.pid)
        text, _ = harness.run_gdb_marked("pyhang report", pid=s.pid)
        core_file = s.gcore()
        s.py_bt = {"live": harness.pyhang_cli("py-bt", "-p", s.pid)[1],
                   "core": harness.pyhang_cli("py-bt", *harness.core_options(path), core_file, path)[1]}
        core = harness.report_json(executable=path, core=core_file)
        yield s, live, core, text


def nested(truth):
    """3.13+ bind the thread state a thread enters another interpreter with to
    it; 3.12 reuses the interpreter's first one, made by the main thread."""
    return tuple(map(int, truth["python"].split(".")[:2])) >= (3, 13)


def expected(truth, t):
    """(interpreter, [(file, line)]) pyhang should show for a recorded thread."""
    if t["role"] != "exec-into":
        return t["interpreter"], [(f["file"], f["line"]) for f in t["stack"]]
    outer = [(f["file"], f["line"]) for f in truth["outer_stack"]]
    if not nested(truth):
        return 0, outer
    return t["interpreter"], [(f["file"], f["line"]) for f in t["stack"]] + outer


@pytest.mark.parametrize("where", ["live", "core"])
def test_each_thread_shows_the_stack_and_interpreter_it_recorded_in_its_own_interpreter(parked, where):
    s, live, core, _ = parked
    report = live if where == "live" else core
    threads = {t["tid"]: t for t in report["threads"]}
    for t in s.truth["threads"]:
        got = threads[t["tid"]]
        interpreter, stack = expected(s.truth, t)
        assert got["interpreter"] == interpreter, (where, t["role"])
        assert [(f["file"], f["line"]) for f in got["python_frames"]] == stack, (where, t["role"])


@pytest.mark.parametrize("where", ["live", "core"])
def test_every_thread_released_its_own_interpreters_gil_and_none_waits(parked, where):
    s, live, core, _ = parked
    report = live if where == "live" else core
    threads = {t["tid"]: t for t in report["threads"]}
    assert {threads[t["tid"]]["gil"] for t in s.truth["threads"]} == {"released"}
    assert report["gil"] == {"locked": False, "holder_tid": None, "waiters": []}
    # AND sleeping threads in several interpreters are no hang pyhang invents
    assert not report["deadlocks"]


def test_the_text_report_names_each_threads_interpreter(parked):
    s, _, _, text = parked
    for t in s.truth["threads"]:
        interpreter, _ = expected(s.truth, t)
        assert "(LWP %d)" % t["tid"] in text
        assert any("(LWP %d)" % t["tid"] in line and line.split("  GIL:")[0].endswith("(interpreter %d)" % interpreter)
                   for line in text.splitlines()), t["role"]


@pytest.mark.parametrize("where", ["live", "core"])
def test_py_bt_names_the_subinterpreter_each_thread_runs_in(parked, where):
    s, _, _, _ = parked
    headers = {line.split(" (LWP ")[1].split(")")[0]: line for line in s.py_bt[where].splitlines()
               if " (LWP " in line and ", GIL: " in line}
    for t in s.truth["threads"]:
        interpreter, _ = expected(s.truth, t)
        header = headers[str(t["tid"])]
        # THEN a thread of a subinterpreter says which; one of the main interpreter says nothing more
        assert (", interpreter %d," % interpreter in header) == (interpreter != 0), (where, t["role"], header)

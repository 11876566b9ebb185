"""Threads of several interpreters in one process (3.12+): which thread
state an OS thread is shown with, and which GIL each thread counts under."""
from pyhang.analysis import gil as gil_analysis
from pyhang.analysis.python_state import PythonView, gil_summary
from pyhang.model.kinds import GilState
from pyhang.model.report import ThreadReport
from pyhang.model.snapshot import ThreadSnapshot
from pyhang.render.names import thread_problem
from pyhang.model.python_facts import PythonState
from pyhang.model.record import from_data

SYS_FUTEX = 202


def frame(function, line):
    return {"function": function, "file": "/app/%s.py" % function, "line": line}


def state(interp_id, tid, frames, tstate, holds_gil=False):
    return {"tstate": tstate, "interp": 0x1000 * (interp_id + 1), "interp_id": interp_id, "thread_id": tid,
            "native_tid": tid, "frames": frames, "problem": None, "attached": None, "holds_gil": holds_gil}


def gil(interp_id, address, locked=False, holder=0):
    return {"address": address, "size": 0x100, "locked": locked, "holder_tstate": holder, "switch_number": 0,
            "interp_id": interp_id, "source": "gil-state", "ranges": [(address, 0x100)]}


def view(version, threads, gils=()):
    return PythonView(from_data(PythonState, {"status": "ok", "version": version, "threads": threads, "gils": list(gils),
                                              "warnings": []}))


# exec-into (TID 11): its main-interpreter state calls exec; its state in interpreter 3 parks
OUTER = state(0, 11, [frame("exec_into", 9)], 0xa0)
INNER = state(3, 11, [frame("park", 25), frame("<module>", 4)], 0xb0)
IDLE = state(3, 10, [], 0xc0)   # the state interpreter 3 made on the thread that created it, frames none


def test_a_thread_running_code_in_another_interpreter_shows_its_frames_first_then_the_outer_ones_on_313():
    v = view("3.13.0", [INNER, IDLE, OUTER])
    t = v.thread(11)
    assert t.interp_id == 3 and v.interpreters(11) == [3, 0]
    assert [f.function for f in t.frames] == ["park", "<module>", "exec_into"]
    # AND a thread state without frames does not hide the one of the same thread that has them
    assert v.thread(10) is v.threads[1] and v.thread(10).interp_id == 3 and not v.thread(10).frames


def test_on_312_a_reused_thread_state_of_another_interpreter_is_not_shown_as_this_threads_stack():
    # 3.12 reuses interpreter 3's first state (made on the main thread, TID 10) on whatever thread runs code there
    stale = state(3, 10, [frame("park", 25)], 0xd0)
    own = state(0, 10, [frame("main", 103)], 0xe0)
    t = view("3.12.1", [stale, own]).thread(10)
    v = view("3.12.1", [stale, own])
    assert [f.function for f in t.frames] == ["main"] and t.interp_id == 0
    assert v.hidden_interpreters(10) == [3]
    # AND the report words it as the thread's problem
    th = ThreadReport(tid=10, gdb_num=1, hidden_interpreters=v.hidden_interpreters(10))
    assert "thread states of interpreters 3 carry this thread's id too" in thread_problem(th)


def test_a_thread_of_an_interpreter_sharing_the_main_gil_counts_under_the_main_gil():
    # interpreter 1 has a GIL of its own; interpreter 2 shares the main one (the legacy configuration)
    threads = [state(0, 20, [frame("main", 1)], 0x10), state(1, 21, [frame("own", 1)], 0x11),
               state(2, 22, [frame("shared", 1)], 0x12)]
    v = view("3.13.0", threads, [gil(0, 0x5000), gil(1, 0x6000)])
    snaps = [ThreadSnapshot(num=i + 1, tid=t["native_tid"]) for i, t in enumerate(threads)]
    entries, _ = gil_analysis.gils(v, snaps)
    assert {e.interp_id: e.released for e in entries} == {0: [20, 22], 1: [21]}


def test_a_thread_waiting_for_its_own_interpreters_gil_is_no_waiter_of_the_main_gil_nor_waits_on_its_holder():
    threads = [state(0, 30, [frame("main", 1)], 0x30, holds_gil=True), state(1, 31, [frame("own", 1)], 0x31),
               state(1, 32, [frame("wants", 1)], 0x32)]
    v = view("3.13.0", threads, [gil(0, 0x5000, True, 0x30), gil(1, 0x6000, True, 0x31)])
    waiting = {"orig_rax": SYS_FUTEX, "rdi": 0x6010}   # asleep on interpreter 1's GIL
    assert v.holder_of_wait(waiting, default=30) == 31
    summary = gil_summary(v, {30: GilState.HOLDS, 31: GilState.HOLDS, 32: GilState.WAITING})
    assert summary.holder_tid == 30 and summary.waiters == []


def test_a_thread_in_two_interpreters_keeps_what_could_not_be_read_of_each_state_on_313():
    # GIVEN the frames of both of a thread's states were read only in part (3.13+: shown together)
    unread = {"path": [{"part": "frame", "address": 0x7000, "name": "", "number": 0}], "why": "unreadable",
              "number": 0, "limit": 0, "at": 0, "name": "", "count": 0}
    inner = dict(INNER, problem=unread)
    outer = dict(OUTER, problem=dict(unread, path=[{"part": "frame", "address": 0x8000, "name": "", "number": 0}]))
    v = view("3.13.0", [inner, IDLE, outer])
    # THEN the thread carries both problems, and the report says both
    from pyhang.analysis.report import _python_problem
    th = ThreadReport(tid=11, gdb_num=2, python_problem=_python_problem(v.thread(11).problem))
    said = thread_problem(th)
    assert "0x7000" in said and "0x8000" in said, said
    # AND py-bt, which words the thread state itself, says both too
    from pyhang.render.text import render_py_bt
    assert "0x7000" in render_py_bt(2, 11, "3.13.0", "released", v.thread(11), []).split("incomplete:")[1]
    assert "0x8000" in render_py_bt(2, 11, "3.13.0", "released", v.thread(11), []).split("incomplete:")[1]

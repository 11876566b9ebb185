"""The asyncio analysis on synthetic snapshots: await cycles (direct, through
a gather's children, through a future another task completes), each found
once; garbage in the decoded facts gives no cycle and no crash."""
from pyhang import analysis
from pyhang.model.asyncio_facts import AsyncioState
from pyhang.model.record import from_data
from pyhang.model.report import TargetInfo
from pyhang.model.snapshot import ProcessSnapshot
from pyhang.render import json as render_json
from pyhang.render.text import render_text

import harness
from pyhang.model.python_facts import PythonState


def task(addr, name, awaits=None, children=(), completes=(), state="pending"):
    return {"object": addr, "name": name, "state": state, "native": True, "loop": 0x1000, "stack": [],
            "awaits": None if awaits is None else {"object": awaits, "type": "_asyncio.Future", "state": "pending",
                                                   "children": list(children), "chained": []},
            "completes": [{"object": c, "type": "_GatheringFuture"} for c in completes]}


def report_of(tasks, loops=None, warnings=()):
    snap = ProcessSnapshot(target=TargetInfo(kind="core"), python=from_data(PythonState, {"status": "ok", "threads": []}),
                           asyncio=from_data(AsyncioState, {
                               "imported": True, "tasks": tasks, "jobs": [], "warnings": list(warnings),
                               "loops": loops if loops is not None else [{"loop": 0x1000}]}))
    rep = analysis.build_report(snap)
    harness.validated_report(render_json.to_json(rep))
    render_text(rep)
    return rep


def cycles(rep):
    return sorted(sorted(t.name for t in d.tasks) for d in rep.deadlocks if d.kind == "await")


def test_a_three_task_await_cycle_is_one_deadlock():
    rep = report_of([task(0x10, "a", awaits=0x20), task(0x20, "b", awaits=0x30), task(0x30, "c", awaits=0x10)])
    assert cycles(rep) == [["a", "b", "c"]]


def test_a_cycle_through_gather_and_a_completed_future_is_found():
    # a awaits gather(b); b awaits a future that c completes (shield); c awaits a
    rep = report_of([task(0x10, "a", awaits=0x90, children=[0x20]), task(0x20, "b", awaits=0x91),
                     task(0x30, "c", awaits=0x10, completes=[0x91])])
    assert cycles(rep) == [["a", "b", "c"]]


def test_a_chain_without_a_cycle_and_done_tasks_are_no_deadlock():
    rep = report_of([task(0x10, "a", awaits=0x20), task(0x20, "b", awaits=0x30),
                     task(0x30, "c", awaits=0x10, state="finished")])
    assert cycles(rep) == []


def test_garbage_facts_give_no_cycle_and_no_crash():
    rep = report_of([{"object": None}, {"object": 0x10, "awaits": {"object": 0x10}}, {}, task(0x20, "x", awaits=None)],
                    loops=[{}, {"loop": None}])
    assert cycles(rep) == []


def test_a_sleep_past_its_deadline_is_overdue_and_says_why_never_in_a_negative_time():
    from pyhang.model.kinds import AwaitKind
    from pyhang.model.report import Awaited
    from pyhang.render.asyncio import await_text
    names = lambda tid: "Thread %d" % tid
    assert await_text(Awaited(kind=AwaitKind.SLEEP, when=883.69, remaining=12.0), names) == \
        "sleeps until loop time 883.690 (in 12.0 s)"
    late = Awaited(kind=AwaitKind.SLEEP, when=883.69, remaining=-23.3)
    assert await_text(late, names, loop_blocked=True) == (
        "sleeps until loop time 883.690 (overdue by 23.3 s: its event loop is blocked inside a task's step and runs "
        "no timer until that returns)")
    assert await_text(late, names) == (
        "sleeps until loop time 883.690 (overdue by 23.3 s: its event loop has not come back to run its timers: it is "
        "blocked or busy in a task or callback)")


def test_a_loop_blocked_in_a_system_call_names_the_call():
    from pyhang.model.verdict_facts import AsyncioLoopBlockedFacts
    from pyhang.render.asyncio import loop_blocked_text
    facts = AsyncioLoopBlockedFacts(task="blocker", tid=7, ready=1, pending=3, frame=None, program_frame=None,
                                    wait="syscall", wait_address=None, wait_call="clock_nanosleep")
    text = loop_blocked_text(facts, lambda tid: "Thread 1 (LWP %d)" % tid, lambda kind, address: kind)
    assert ", waiting in the clock_nanosleep system call;" in text and "syscall" not in text, text
    facts.wait_call = None
    assert ", waiting in a system call;" in loop_blocked_text(facts, lambda tid: "T", lambda kind, address: kind)


def test_tasks_read_with_the_targets_own_asyncio_offsets_are_reported_with_a_warning_saying_so():
    # GIVEN the reader found the target's _AsyncioDebug placing a task's name elsewhere than pyhang's row
    differ = {"kind": "asyncio-debug-differ", "address": 0x7f00, "other": 0, "expected": 0, "number": 0, "count": 0,
              "text": "3.14", "text2": "", "text3": "_AsyncioDebug",
              "changes": [{"name": "task_name", "was": 136, "now": 144}]}
    rep = report_of([task(0x10, "a")], warnings=[differ])
    # THEN the report says so among its warnings, in text and JSON
    said = "asyncio: the target's _AsyncioDebug differ from the 3.14 row in task_name 136->144; using the target's"
    assert "warning: " + said in render_text(rep)
    assert said in render_json.to_json(rep)["warnings"]


def test_asyncio_facts_read_in_part_are_a_warning_never_a_silent_gap():
    # GIVEN the reader stopped in a thread's task list, which loops
    loops = {"path": [{"part": "thread-task-list", "address": 0x5000, "name": "", "number": 77}], "why": "loops",
             "number": 0, "limit": 0, "at": 0x5010, "name": "", "count": 0}
    snap = ProcessSnapshot(target=TargetInfo(kind="core"), python=from_data(PythonState, {"status": "ok", "threads": []}),
                           asyncio=from_data(AsyncioState, {"imported": True, "tasks": [task(0x10, "a")], "jobs": [],
                                                            "loops": [{"loop": 0x1000}], "problem": loops}))
    rep = analysis.build_report(snap)
    # THEN the report says asyncio was read in part, and where it stopped
    said = [w for w in render_json.to_json(rep)["warnings"] if w.startswith("asyncio's tasks could not all be read")]
    assert len(said) == 1 and "0x5010" in said[0], render_json.to_json(rep)["warnings"]

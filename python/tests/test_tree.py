"""The cross-process analysis without gdb, on synthetic per-process
reports: wait4 and pipe waits make edges across processes, their cycles are
deadlocks across processes with the confidence of their weakest edge, waits
from cores are said not followed, and garbage gives no crash."""
import json
import os

import harness
from pyhang.analysis import tree as tree_analysis
from pyhang.analysis.syscall_names import NAMES
from pyhang.model.kinds import Confidence, GilState, WaitKind
from pyhang.model.report import BlockedOn, Report, TargetInfo, ThreadReport
from pyhang.model.tree import ProcessEntry, TreeReport
from pyhang.render.tree import render_tree_text, tree_json

NUMBERS = {name: nr for nr, name in NAMES.items()}


def syscall_thread(tid, name, **facts):
    s = {"name": name, "number": NUMBERS[name], "fd_table": facts.pop("fd_table", True)}
    s.update(facts)
    return ThreadReport(tid=tid, gdb_num=1, gil=GilState.RELEASED,
                        blocked_on=BlockedOn(kind=WaitKind.SYSCALL, confidence=Confidence.CERTAIN, lock=s))


def process(pid, parent, *threads, kind="live"):
    report = Report(target=TargetInfo(kind=kind, pid=pid, parent_pid=parent, python_version="3.11.2"),
                    threads=list(threads))
    return ProcessEntry(pid=pid, parent_pid=parent, report=report, comm="python3")


def pipe_read(tid, holders, link="pipe:[7]"):
    return syscall_thread(tid, "read", fd=3, object={"kind": "pipe", "link": link, "access": "read",
                                                       "holders": holders, "holders_complete": True})


def holder(pid, fds=(4,)):
    return {"pid": pid, "comm": "python3", "fds": list(fds), "threads": []}


def analyse(*processes, root=100):
    return tree_analysis.analyse(TreeReport(root_pid=root, processes=list(processes)))


def test_a_parent_waiting_for_a_child_that_reads_its_pipe_is_a_certain_deadlock():
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=200)),
                   process(200, 100, pipe_read(200, [holder(100)])))
    (d,) = tree.deadlocks
    assert d.confidence == Confidence.CERTAIN and d.pids == [100, 200] and sorted(d.nodes) == [(100, 100), (200, 200)]
    text = render_tree_text(tree)
    assert "Found one deadlock across 2 processes (certain), 2 threads:" in text.splitlines()[2]
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    assert doc["deadlocks"][0]["processes"] == [100, 200]
    assert {e["kind"] for e in doc["deadlocks"][0]["edges"]} == {"child-exit", "pipe-other-end"}


def test_a_holder_with_other_threads_or_other_holders_makes_it_likely():
    # the parent has two threads: either could write to the pipe
    busy = analyse(process(100, 1, syscall_thread(100, "wait4", child=-1), syscall_thread(101, "pause")),
                   process(200, 100, pipe_read(200, [holder(100)])))
    assert [d.confidence for d in busy.deadlocks] == [Confidence.LIKELY]
    # another process (not waiting) holds the write end too
    shared = analyse(process(100, 1, syscall_thread(100, "wait4", child=200)),
                     process(200, 100, pipe_read(200, [holder(100), holder(300)])),
                     process(300, 100, syscall_thread(300, "pause")))
    assert [d.confidence for d in shared.deadlocks] == [Confidence.LIKELY]


def test_no_cycle_no_deadlock_and_a_process_not_examined_is_one_line():
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=200)),
                   ProcessEntry(pid=200, parent_pid=100, problem="a zombie: it exited and its parent has not reaped it"),
                   process(300, 100, pipe_read(300, [holder(999)])))
    assert tree.deadlocks == []
    text = render_tree_text(tree)
    assert "No deadlock found across processes." in text
    assert "PID 200: not examined: a zombie: it exited and its parent has not reaped it" in text
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    assert doc["processes"][1] == {"pid": 200, "problem": "a zombie: it exited and its parent has not reaped it",
                                   "parent_pid": 100}


def test_waits_on_fds_from_cores_are_said_not_followed():
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=200), kind="core"),
                   process(200, 100, syscall_thread(200, "read", fd=3, object=None, fd_table=False), kind="core"))
    assert tree.deadlocks == [] and tree.unfollowed == [(200, 200)]
    assert ("warning: cores record no fd table: waits on pipes and sockets are not followed across processes "
            "(PID 200 LWP 200)") in render_tree_text(tree)


def test_cycles_within_one_process_are_left_to_its_report_and_the_search_is_bounded():
    # a chain of 40 single-thread processes each reading a pipe held only by the next, the last by the first
    n = 40
    procs = [process(100 + i, 1, pipe_read(100 + i, [holder(100 + (i + 1) % n)])) for i in range(n)]
    tree = analyse(*procs)
    (d,) = tree.deadlocks
    assert len(d.pids) == n and d.confidence == Confidence.CERTAIN
    # every process holding every pipe: many cycles, listed up to the bound
    everyone = [holder(100 + j) for j in range(12)]
    dense = analyse(*[process(100 + i, 1, pipe_read(100 + i, everyone)) for i in range(12)])
    assert dense.cycles_truncated and len(dense.deadlocks) <= tree_analysis.MAX_CYCLES
    assert all(d.confidence == Confidence.LIKELY for d in dense.deadlocks)


def test_garbage_facts_give_no_crash():
    odd = [syscall_thread(5, "wait4", child=None), syscall_thread(6, "read", fd=-1, object={"kind": "pipe"}),
           syscall_thread(7, "flock", fd=3, object={"kind": "file"}, lock_holders=[{"pid": None}, {}]),
           ThreadReport(tid=8, gdb_num=2, blocked_on=BlockedOn(kind=WaitKind.SYSCALL, lock={}))]
    tree = analyse(process(5, None, *odd), ProcessEntry(pid=0, problem="core.x: not a core"), root=None)
    assert tree.deadlocks == []
    assert "waits in flock on fd 3: file (path unknown)" in render_tree_text(tree)
    json.dumps(tree_json(tree))


def test_the_tree_schema_is_a_valid_json_schema():
    import jsonschema
    with open(os.path.join(harness.ROOT, "docs", "pyhang-tree-1.schema.json")) as f:
        schema = json.load(f)
    jsonschema.validators.validator_for(schema).check_schema(schema)

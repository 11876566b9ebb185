"""The cross-process analysis without gdb, on synthetic per-process
reports: wait4 and pipe waits make edges across processes, their knots
(every possible server of every member's wait blocked inside the set) are
deadlocks across processes, one each whatever the number of cycles in it,
with the chains hanging off them as waiting on them; a wait whose server
died is a hang; a process not examined is never taken for fine; waits from
cores are said not followed, and garbage gives no crash."""
import json
import os

import harness
from pyhang.analysis import tree as tree_analysis
from pyhang.model.files import FdHolder, FdObject, FileLock
from pyhang.analysis.syscall_names import NAMES
from pyhang.model.kinds import AccountReason, Confidence, GilState, ThreadState, WaitKind
from pyhang.model.record import replace, to_data
from pyhang.model.report import BlockedOn, PythonFrame, Report, TargetInfo, ThreadAccount, ThreadReport
from pyhang.model.tree import ProcessEntry, ProcessExit, TreeReport
from pyhang.model.waits import HolderThreadWait, SyscallWait
from pyhang.render.tree import render_tree_text, tree_headline, tree_json

NUMBERS = {name: nr for nr, name in NAMES.items()}


def syscall_thread(tid, name, **facts):
    s = SyscallWait(name=name, number=NUMBERS[name], fd_table=facts.pop("fd_table", True),
                    watches_fds="fds" in facts, **facts)
    return ThreadReport(tid=tid, gdb_num=1, gil=GilState.RELEASED,
                        blocked_on=BlockedOn(kind=WaitKind.SYSCALL, confidence=Confidence.CERTAIN, syscall=s))


def process(pid, parent, *threads, kind="live"):
    report = Report(target=TargetInfo(kind=kind, pid=pid, parent_pid=parent, python_version="3.11.2"),
                    threads=list(threads))
    return ProcessEntry(pid=pid, parent_pid=parent, report=report, comm="python3")


def pipe_read(tid, holders, link="pipe:[7]"):
    return syscall_thread(tid, "read", fd=3, object=FdObject(kind="pipe", link=link, access="read", holders=holders))


def holder(pid, fds=(4,)):
    return FdHolder(pid=pid, comm="python3", fds=list(fds))


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


def test_a_holder_with_a_thread_outside_the_cycle_makes_no_deadlock_but_a_stall():
    # the parent has two threads: either could write to the pipe, and the one in epoll_wait (serving
    # clients) is in no cycle
    busy = analyse(process(100, 1, syscall_thread(100, "wait4", child=-1), syscall_thread(101, "epoll_wait")),
                   process(200, 100, pipe_read(200, [holder(100)])))
    assert busy.deadlocks == []
    assert [st.waiter for st in busy.stalls] == [(200, 200)] and busy.exit_status == 5
    # another process (not waiting on the cycle) holds the write end too
    shared = analyse(process(100, 1, syscall_thread(100, "wait4", child=200)),
                     process(200, 100, pipe_read(200, [holder(100), holder(300)])),
                     process(300, 100, syscall_thread(300, "epoll_wait")))
    assert shared.deadlocks == [] and [st.waiter for st in shared.stalls] == [(200, 200)]


def test_a_holder_outside_the_cycle_that_waits_for_a_signal_only_leaves_a_likely_deadlock_that_names_it():
    # the same, the other holder's thread in pause(): it serves nothing until a signal comes
    for pause in ((100, 101), (300, 300)):
        extra = [syscall_thread(101, "pause")] if pause[0] == 100 else []
        tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=200), *extra),
                       process(200, 100, pipe_read(200, [holder(100)] + ([holder(300)] if pause[0] == 300 else []))),
                       *([process(300, 100, syscall_thread(300, "pause"))] if pause[0] == 300 else []))
        (d,) = tree.deadlocks
        assert d.nodes == [(100, 100), (200, 200)] and d.confidence == Confidence.LIKELY, pause
        assert to_data(d.sleepers) == [{"pid": pause[0], "tid": pause[1], "call": "pause"}] and tree.exit_status == 3


def test_a_second_holder_thread_waiting_for_the_same_child_is_in_the_one_certain_deadlock():
    # the parent's second thread waits for the same child: it cannot write either, so the child's read
    # has no server outside the three threads
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=200), syscall_thread(101, "wait4", child=200)),
                   process(200, 100, pipe_read(200, [holder(100)])))
    (d,) = tree.deadlocks
    assert d.nodes == [(100, 100), (100, 101), (200, 200)] and d.confidence == Confidence.CERTAIN
    # the child's read needs any one of the parent's two threads: both are its edges
    assert sorted(e.owner for e in d.edges if e.waiter == (200, 200)) == [(100, 100), (100, 101)]


ZOMBIE = "a zombie: it exited and its parent has not reaped it"


def zombie(pid, parent, wait_status):
    return ProcessEntry(pid=pid, parent_pid=parent, problem=ZOMBIE, comm="python3",
                        exit=ProcessExit(wait_status=wait_status))


def test_no_cycle_no_deadlock_and_a_zombie_is_one_line_with_how_it_ended():
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=200)), zombie(200, 100, 0),
                   process(300, 100, pipe_read(300, [holder(999)])))
    assert tree.deadlocks == [] and tree.exit_status == 0
    text = render_tree_text(tree)
    assert "No deadlock found across processes." in text
    assert "PID 200 (python3): exited with status 0, and its parent has not reaped it (a zombie)" in text
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    assert doc["processes"][1] == {"pid": 200, "problem": ZOMBIE, "parent_pid": 100, "comm": "python3",
                                   "exit": {"wait_status": 0, "status": 0, "signal": None, "signal_name": None,
                                            "core_dumped": False}}


def test_how_a_zombie_ended_is_read_from_its_wait_status():
    assert (ProcessExit(wait_status=9).signal, ProcessExit(wait_status=9).status) == (9, None)
    assert (ProcessExit(wait_status=3 << 8).signal, ProcessExit(wait_status=3 << 8).status) == (None, 3)
    segv = ProcessExit(wait_status=0x80 | 11)
    assert (segv.signal, segv.core_dumped) == (11, True)
    unknown = ProcessExit()
    assert (unknown.signal, unknown.status, unknown.core_dumped) == (None, None, False)
    tree = analyse(process(100, 1, syscall_thread(100, "pause")), zombie(200, 100, 0x80 | 11),
                   zombie(300, 100, None))
    text = render_tree_text(tree)
    assert "PID 200 (python3): killed by signal 11 (SIGSEGV), core dumped, and its parent" in text
    assert "PID 300 (python3): exited (how could not be read), and its parent has not reaped it" in text
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    assert doc["processes"][1]["exit"]["signal_name"] == "SIGSEGV"


def test_a_tree_of_cores_lists_the_zombies_their_parents_records_name_and_the_death_explains_the_wait():
    # GIVEN the cores pyhang gcore --tree wrote of a parent reading a pipe and of its live worker, which holds the
    # pipe's write end too: the killed worker got no core, the parent's record of /proc names it, dead
    from pyhang import processes
    from pyhang.model.proc_record import ChildProcess, ProcSummary
    parent = process(100, 1, pipe_read(100, [holder(100), holder(300)]), kind="core")
    parent.report.target.proc_record = ProcSummary(children=[ChildProcess(pid=200, state="Z", comm="worker",
                                                                          exit_status=9),
                                                             ChildProcess(pid=300, state="S", comm="worker")])
    live_worker = process(300, 100, syscall_thread(300, "pause"), kind="core")
    tree = TreeReport(root_pid=100, processes=[parent, live_worker])
    processes._recorded_zombies(tree)
    # THEN the zombie is the tree's, as a live tree has it: its parent, the line, how it ended; the child of
    # which a core was given is that core's alone
    assert [(p.pid, p.parent_pid, p.report is None) for p in tree.processes] == [(100, 1, False), (300, 100, False),
                                                                                 (200, 100, True)]
    dead = tree.processes[2]
    assert (dead.problem, dead.comm, dead.exit.signal) == (ZOMBIE, "worker", 9)
    # AND its death explains the parent's wait as live: a server that died (5), never the all-clear
    tree = tree_analysis.analyse(tree)
    assert [(pid, v.kind) for pid, v in tree.verdicts] == [(100, "server-died")] and tree.exit_status == 5


def test_a_process_that_could_not_be_examined_is_never_counted_as_fine():
    # GIVEN a tree whose examined processes are all fine (one sleeps, the other waits in pause)
    fine = [process(100, 1, syscall_thread(100, "pause")), process(300, 100, syscall_thread(300, "pause"))]
    assert analyse(*fine).exit_status == 0
    # WHEN one more child could not be examined, a core could not be read, or the tree was bounded
    traced = ProcessEntry(pid=200, parent_pid=100, problem="it is already traced by process 300")
    for tree in (analyse(*fine, traced), analyse(*fine, ProcessEntry(pid=0, problem="core.9: not a core"))):
        # THEN the tree is incomplete (4), and its headline says which
        assert tree.exit_status == 4 and tree.deadlocks == [] and tree_analysis.unexamined(tree)
    assert render_tree_text(analyse(*fine, traced)).splitlines()[2] == (
        "Report incomplete: PID 200 not examined; no deadlock across processes can be ruled out.")
    bounded = TreeReport(root_pid=100, processes=list(fine), truncated=3)
    assert tree_analysis.analyse(bounded).exit_status == 4
    assert "3 more descendants were not examined (the tree is bounded)" in tree_headline(bounded)
    # AND something worse still wins: a deadlock is 3
    locked = analyse(process(100, 1, syscall_thread(100, "wait4", child=200)),
                     process(200, 100, pipe_read(200, [holder(100)])), replace(traced, pid=400))
    assert locked.exit_status == 3


def test_waits_on_fds_from_cores_are_said_not_followed():
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=200), kind="core"),
                   process(200, 100, syscall_thread(200, "read", fd=3, object=None, fd_table=False), kind="core"))
    assert tree.deadlocks == [] and tree.unfollowed == [(200, 200)]
    assert ("warning: these cores record no fd table (cores `pyhang gcore` makes do): waits on pipes and sockets "
            "are not followed across processes (PID 200 LWP 200)") in render_tree_text(tree)


def test_a_ring_and_processes_all_holding_every_pipe_are_each_one_deadlock_not_their_cycles():
    # a ring of 40 single-thread processes each reading a pipe held only by the next, the last by the first
    n = 40
    procs = [process(100 + i, 1, pipe_read(100 + i, [holder(100 + (i + 1) % n)])) for i in range(n)]
    tree = analyse(*procs)
    (d,) = tree.deadlocks
    assert len(d.pids) == n and d.confidence == Confidence.CERTAIN
    # every process holding every pipe: thousands of cycles, one knot
    everyone = [holder(100 + j) for j in range(12)]
    dense = analyse(*[process(100 + i, 1, pipe_read(100 + i, everyone)) for i in range(12)])
    (d,) = dense.deadlocks
    assert d.pids == list(range(100, 112)) and d.confidence == Confidence.CERTAIN and d.waiting == []
    assert len(d.edges) == 12 * 11


def test_a_knot_within_one_process_is_left_to_its_report():
    # two threads of one process each reading a pipe only the other thread's process (their own) holds
    own = process(100, 1, pipe_read(100, [holder(100)]), pipe_read(101, [holder(100)], link="pipe:[8]"))
    tree = analyse(own)
    assert tree.deadlocks == [] and sorted(e.owner for e in tree.edges) == [(100, 100), (100, 101)]


def test_garbage_facts_give_no_crash():
    odd = [syscall_thread(5, "wait4", child=None), syscall_thread(6, "read", fd=-1, object=FdObject(kind="pipe")),
           syscall_thread(7, "flock", fd=3, object=FdObject(kind="file"), lock_holders=[FileLock(pid=None), FileLock(pid=None)]),
           ThreadReport(tid=8, gdb_num=2, blocked_on=BlockedOn(kind=WaitKind.SYSCALL, syscall=SyscallWait()))]
    tree = analyse(process(5, None, *odd), ProcessEntry(pid=0, problem="core.x: not a core"), root=None)
    assert tree.deadlocks == []
    assert "waits in flock on fd 3: file (path unknown)" in render_tree_text(tree)
    json.dumps(tree_json(tree))


def test_the_tree_schema_is_a_valid_json_schema():
    import jsonschema
    with open(os.path.join(harness.ROOT, "docs", "pyhang-tree-1.schema.json")) as f:
        schema = json.load(f)
    jsonschema.validators.validator_for(schema).check_schema(schema)


def test_a_tree_verdicts_facts_are_held_to_its_kinds_definition_in_the_report_schema():
    # GIVEN a tree whose verdict is a server that died, as the tree's JSON gives it
    doc = json.loads(json.dumps(tree_json(analyse(*loader()))))
    assert not harness.tree_errors(doc)
    # WHEN its facts break the record of its kind (pyhang-report-1's verdict_facts_server_died)
    doc["verdicts"][0]["facts"]["waits"] = "not a list"
    del doc["verdicts"][0]["facts"]["dead"]
    # THEN the tree's contract says so, at the verdict
    errors = harness.tree_errors(doc)
    assert any(e.startswith("verdicts/0/facts/waits: ") for e in errors), errors
    assert any(e.startswith("verdicts/0/facts: ") and "dead" in e for e in errors), errors


# ---- stalls: waits nothing serves now ---------------------------------------

def test_a_write_whose_readers_all_wait_elsewhere_is_a_stall_naming_what_they_do():
    # GIVEN a job writing a pipe whose only reader process sleeps
    writer = syscall_thread(100, "write", fd=4, object=FdObject(kind="pipe", link="pipe:[9]", access="write",
                                                                holders=[holder(200, fds=(0,))]))
    tree = analyse(process(100, 1, writer), process(200, 100, syscall_thread(200, "clock_nanosleep")))
    # THEN it is no deadlock, but a stall naming the reader and what its thread does
    assert tree.deadlocks == []
    (st,) = tree.stalls
    assert st.waiter == (100, 100) and st.link == "pipe:[9]"
    assert to_data(st.holders) == [{"pid": 200, "comm": "python3", "thread_count": 1,
                                    "threads": [{"tid": 200, "kind": WaitKind.SYSCALL, "syscall": "clock_nanosleep"}]}]
    text = render_tree_text(tree)
    assert "waits in write on pipe:[9]; the other end is held only by PID 200 (python3): LWP 200 in clock_nanosleep" \
        in text, text
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    assert doc["stalls"][0]["waiter_pid"] == 100 and doc["stalls"][0]["holders"][0]["pid"] == 200


def test_no_stall_when_a_holder_may_serve_the_wait_or_the_wait_is_in_a_cycle():
    sleeping = syscall_thread(200, "clock_nanosleep")
    running = ThreadReport(tid=201, gdb_num=2, gil=GilState.RELEASED)   # not blocked: it may read at any time
    # a holder with a running thread
    assert analyse(process(100, 1, pipe_read(100, [holder(200)])), process(200, 100, sleeping, running)).stalls == []
    # a holder that was not examined
    assert analyse(process(100, 1, pipe_read(100, [holder(300)]))).stalls == []
    # a holder thread parked on the same pipe or waiting for the waiter's process
    parked = replace(holder(200), threads=[HolderThreadWait(tid=200, relevant=True)])
    assert analyse(process(100, 1, pipe_read(100, [parked])), process(200, 100, sleeping)).stalls == []
    # the waiter's own process holds the other end too
    assert analyse(process(100, 1, pipe_read(100, [holder(100), holder(200)])),
                   process(200, 100, sleeping)).stalls == []
    # a deadlock is reported as one, not as a stall
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=200)),
                   process(200, 100, pipe_read(200, [holder(100)])))
    assert tree.deadlocks and tree.stalls == []


# ---- readers of one pipe (pool workers) ------------------------------------

def test_readers_of_one_pipe_another_holder_can_write_to_make_no_cycle_with_each_other():
    # GIVEN a parent that could write (its thread waits on nothing of the pipe) and two workers
    # reading the pipe whose write end each of them inherited
    parent = process(100, 1, syscall_thread(100, "epoll_wait"))
    w1 = process(200, 100, pipe_read(200, [holder(100), holder(300)]))
    w2 = process(300, 100, pipe_read(300, [holder(100), holder(200)]))
    tree = analyse(parent, w1, w2)
    # THEN the parent, which is in no wait the graph knows, could write to both: no deadlock
    assert tree.deadlocks == []
    # (each worker's read may be ended by any holder: the parent and the other worker)
    assert sorted((e.waiter[0], e.owner[0]) for e in tree.edges) == [(200, 100), (200, 300), (300, 100), (300, 200)]


def test_readers_of_one_pipe_with_no_other_holder_are_a_real_deadlock():
    # GIVEN two processes each reading the same pipe, each holding the write end the other waits for:
    # nobody else can ever write
    tree = analyse(process(100, 1, pipe_read(100, [holder(200)])),
                   process(200, 100, pipe_read(200, [holder(100)])))
    (d,) = tree.deadlocks
    assert d.pids == [100, 200] and d.confidence == Confidence.CERTAIN


def test_a_parent_waiting_for_a_worker_and_workers_reading_a_pipe_only_they_hold_are_one_knot():
    # GIVEN the parent waiting for worker 200 to exit, and both workers reading a pipe
    # only the parent could write to (besides each other)
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=200)),
                   process(200, 100, pipe_read(200, [holder(100), holder(300)])),
                   process(300, 100, pipe_read(300, [holder(100), holder(200)])))
    # THEN the three are one deadlock: worker 300 could write to worker 200's pipe, but it is stuck
    # reading too, and its own read can be ended only by the two others
    (d,) = tree.deadlocks
    assert d.pids == [100, 200, 300] and d.confidence == Confidence.CERTAIN


def test_a_reader_from_the_other_end_or_of_another_pipe_is_still_a_waker():
    # a holder that reads another pipe may still act on ours: 200 and 300 each read what the other holds
    # and the parent waiting for any child to exit cannot write either: all three are one knot
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=-1)),
                   process(200, 100, pipe_read(200, [holder(100), holder(300)])),
                   process(300, 100, pipe_read(300, [holder(100), holder(200)], link="pipe:[8]")))
    assert [d.pids for d in tree.deadlocks] == [[100, 200, 300]]
    # but not while a third holder, in no cycle, could still write to both
    free = analyse(process(100, 1, syscall_thread(100, "epoll_wait")),
                   process(200, 100, pipe_read(200, [holder(100), holder(300)])),
                   process(300, 100, pipe_read(300, [holder(100), holder(200)], link="pipe:[8]")))
    assert free.deadlocks == [] and sorted(st.waiter for st in free.stalls) == [(200, 200), (300, 300)]


# ---- knots: OR-waits -------------------------------------------------------

def knot_of_three(first=200, link="pipe:[%d]", extra=()):
    """Three single-thread processes, each reading its own pipe whose write ends all three hold (and `extra`)."""
    pids = [first, first + 1, first + 2]
    return [process(pid, 100, pipe_read(pid, [holder(o) for o in pids if o != pid] + [holder(e) for e in extra],
                                        link=link % pid)) for pid in pids]


def test_three_processes_reading_pipes_each_holds_the_write_ends_of_are_one_deadlock():
    tree = analyse(process(100, 1, syscall_thread(100, "pause")), *knot_of_three())
    # THEN one deadlock with all three, never their pairwise cycles
    (d,) = tree.deadlocks
    assert d.nodes == [(200, 200), (201, 201), (202, 202)] and d.confidence == Confidence.CERTAIN
    # each read may be ended by either of the two others: both are its edges
    assert sorted((e.waiter[0], e.owner[0]) for e in d.edges) == [
        (200, 201), (200, 202), (201, 200), (201, 202), (202, 200), (202, 201)]
    assert tree.stalls == [] and tree.exit_status == 3
    text = render_tree_text(tree)
    assert text.splitlines()[2] == "Found one deadlock across 3 processes (certain), 3 threads:"
    assert "(its process holds the other end of pipe:[201], on which PID 201 (LWP 201) waits)" in text
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    (j,) = doc["deadlocks"]
    assert j["processes"] == [200, 201, 202] and j["waiting"] == [] and len(j["edges"]) == 6
    assert "moved between" not in text


def test_a_knot_member_the_second_look_saw_move_is_said_to_have_moved():
    procs = knot_of_three()
    procs[1].report.threads[0].moved = ["cpu", "syscall"]
    text = render_tree_text(analyse(process(100, 1, syscall_thread(100, "pause")), *procs))
    assert "moved between the second look's looks (cpu, syscall): this may be contention" in text


def test_two_knots_are_two_deadlocks_and_one_holder_outside_that_can_run_unties_a_knot():
    # GIVEN two separate knots of three
    tree = analyse(process(100, 1, syscall_thread(100, "pause")), *knot_of_three(200) + knot_of_three(300))
    assert [d.pids for d in tree.deadlocks] == [[200, 201, 202], [300, 301, 302]]
    assert "Deadlock 2 of 2 across 3 processes (certain), 3 threads:" in render_tree_text(tree)
    # WHEN one more process holds the write ends of the second knot's pipes and waits on nothing the graph
    # knows (it sleeps, it runs): it could write, so that knot is no deadlock; the first still is
    freed = analyse(process(100, 1, syscall_thread(100, "pause")), *knot_of_three(200) + knot_of_three(300, extra=[400]),
                    process(400, 100, syscall_thread(400, "clock_nanosleep")))
    assert [d.pids for d in freed.deadlocks] == [[200, 201, 202]]
    running = ThreadReport(tid=400, gdb_num=1, gil=GilState.RELEASED)
    assert analyse(*knot_of_three(extra=[400]), process(400, 100, running)).deadlocks == []


def test_a_chain_hanging_off_a_knot_waits_on_it_and_is_not_part_of_it():
    # GIVEN a knot of three; a process reading a pipe only one of them holds; its parent waiting for it
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=500)), *knot_of_three(),
                   process(500, 100, pipe_read(500, [holder(201)], link="pipe:[5]")))
    # THEN the knot is the deadlock, and the chain is what waits on it
    (d,) = tree.deadlocks
    assert d.pids == [200, 201, 202] and d.waiting == [(100, 100), (500, 500)]
    # AND the chain is no stall: the deadlock explains it
    assert tree.stalls == []
    text = render_tree_text(tree)
    assert "  waiting on it, not part of it: PID 100 Thread 1 (LWP 100), PID 500 Thread 1 (LWP 500)" in text
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    assert doc["deadlocks"][0]["waiting"] == [{"pid": 100, "tid": 100}, {"pid": 500, "tid": 500}]


def test_a_cycle_that_needs_a_knots_thread_too_is_cut_to_the_part_that_needs_only_itself():
    # GIVEN parent 100 waiting for child 200, whose second thread 201 reads a pipe only the parent holds
    # (a cycle), while the child's main thread reads a pipe the parent and knot member 300 hold
    parent = process(100, 1, syscall_thread(100, "wait4", child=200))
    child = process(200, 100, pipe_read(200, [holder(100), holder(300)], link="pipe:[2]"),
                    pipe_read(201, [holder(100)], link="pipe:[3]"))
    knot = [process(300, 100, pipe_read(300, [holder(301)], link="pipe:[30]")),
            process(301, 100, pipe_read(301, [holder(300)], link="pipe:[31]"))]
    tree = analyse(parent, child, *knot)
    # THEN two deadlocks: the knot, and parent and thread 201 (the parent needs every thread of its child to
    # end: 201's end only likely, as a thread of the child that is not its main one)
    assert [(d.nodes, d.confidence) for d in tree.deadlocks] == [
        ([(300, 300), (301, 301)], Confidence.CERTAIN), ([(100, 100), (200, 201)], Confidence.LIKELY)]
    # AND the child's main thread, which either could serve, waits on both
    assert all(d.waiting == [(200, 200)] for d in tree.deadlocks)


def test_an_or_wait_with_a_server_not_in_the_graph_is_never_proven_unmet():
    def two(holders_200, complete=True, *more):
        w = pipe_read(200, holders_200)
        w.blocked_on.syscall.object.holders_complete = complete
        return analyse(process(100, 1, syscall_thread(100, "wait4", child=200)), process(200, 100, w), *more)
    # the cycle itself, then the same with one more holder: outside the tree, not examined, a zombie's
    # pid, an unreadable pid, or a scan of /proc cut short
    assert two([holder(100)]).deadlocks
    assert two([holder(100), holder(999)]).deadlocks == []
    assert two([holder(100), holder(300)], True, ProcessEntry(pid=300, parent_pid=100, problem="traced")).deadlocks == []
    assert two([holder(100), replace(holder(0), pid=-1)]).deadlocks == []
    assert two([holder(100)], False).deadlocks == []
    # a wait for a child not examined, or for any child when one is not
    assert analyse(process(100, 1, syscall_thread(100, "wait4", child=200)),
                   ProcessEntry(pid=200, parent_pid=100, problem="traced")).deadlocks == []
    anyone = analyse(process(100, 1, syscall_thread(100, "wait4", child=-1)),
                     process(200, 100, pipe_read(200, [holder(100)])),
                     ProcessEntry(pid=300, parent_pid=100, problem="traced"))
    assert anyone.deadlocks == []


def test_garbage_and_partial_graphs_give_no_crash_and_no_deadlock():
    odd = [syscall_thread(5, "read", fd=3, object=FdObject(kind="pipe", holders=[FdHolder(pid=None)])),
           syscall_thread(6, "read", fd=3, object=FdObject(kind="socket", holders=None)),
           syscall_thread(7, "read", fd=3, object=FdObject(kind="pipe", holders=[])),
           syscall_thread(8, "wait4", child=-7), syscall_thread(9, "wait4", child=0),
           syscall_thread(10, "flock", fd=3, object=FdObject(kind="file"), lock_holders=[FileLock(pid=-1)])]
    tree = analyse(process(5, None, *odd), process(11, 5, ThreadReport(tid=11, gdb_num=1)),
                   process(12, 5), ProcessEntry(pid=13, parent_pid=5), root=5)
    assert tree.deadlocks == []
    json.dumps(tree_json(tree))
    render_tree_text(tree)
    assert tree_analysis.knots(set(), {}) == [] and tree_analysis.stuck({}) == set()


# ---- a multiprocessing.Pool's lost task ------------------------------------------------------

def _py_thread(tid, blocked, *frames):
    return ThreadReport(tid=tid, gdb_num=1, gil=GilState.RELEASED, blocked_on=blocked,
                        python_frames=[PythonFrame(function=f, file=p, line=1) for p, f in frames])


POOL_PY, QUEUES_PY = "/usr/lib/python3.11/multiprocessing/pool.py", "/usr/lib/python3.11/multiprocessing/queues.py"


def _worker(pid, *inner):
    read = syscall_thread(pid, "read", fd=3).blocked_on
    return process(pid, 100, _py_thread(pid, read, *inner, (POOL_PY, "worker")))


def test_a_pool_result_awaited_while_every_worker_waits_for_a_task_is_a_lost_task():
    event = BlockedOn(kind=WaitKind.PY_EVENT, confidence=Confidence.CERTAIN)
    parent = process(100, 1, _py_thread(100, event, ("/usr/lib/python3.11/threading.py", "Event.wait"),
                                        (POOL_PY, "ApplyResult.wait"), (POOL_PY, "Pool.map")))
    idle = analyse(parent, _worker(200, (QUEUES_PY, "SimpleQueue.get")), _worker(300, (QUEUES_PY, "get")))
    ((pid, v),) = idle.verdicts
    assert (pid, v.kind, v.threads, sorted(v.facts.workers)) == (100, "pool-task-lost", [100], [200, 300])
    assert idle.exit_status == 5
    # THEN not while one worker is inside a task (its frames above the worker loop), or the task handler runs
    busy = analyse(parent, _worker(200, (QUEUES_PY, "get")), _worker(300, ("/srv/app.py", "work")))
    assert busy.verdicts == []
    handler = _py_thread(101, None, (POOL_PY, "Pool._handle_tasks"))
    running = analyse(process(100, 1, parent.report.threads[0], handler), _worker(200, (QUEUES_PY, "get")))
    assert running.verdicts == []


def test_a_pool_result_wait_is_accounted_for_by_the_pools_workers_in_the_tree():
    # GIVEN a parent waiting in Pool.map, its report unable to name who sets the result's Event
    event = BlockedOn(kind=WaitKind.PY_EVENT, confidence=Confidence.CERTAIN)
    main = _py_thread(100, event, ("/usr/lib/python3.11/threading.py", "Event.wait"),
                      (POOL_PY, "ApplyResult.wait"), (POOL_PY, "Pool.map"))
    main.account = ThreadAccount(state=ThreadState.UNACCOUNTED, reason=AccountReason.OWNERS_UNKNOWN)
    sleeping = syscall_thread(200, "clock_nanosleep", timeout={"ns": 10 ** 9}).blocked_on
    worker = process(200, 100, _py_thread(200, sleeping, ("/srv/app.py", "work"), (POOL_PY, "worker")))
    tree = analyse(process(100, 1, main), worker)
    # THEN the tree accounts for it: it waits on the pool's workers (any may run its task), one of which runs
    assert tree.unaccounted == [] and tree.deadlocks == [] and tree.exit_status == 0
    # AND alone, with no worker of it in the tree, it stays not accounted for
    assert analyse(process(100, 1, main)).unaccounted == [(100, 100)]


# ---- a wait whose server died --------------------------------------------------------------

def loader(*extra_holders, worker=None, dead=9, dead_parent=100):
    """A DataLoader-style parent 100 reading its result pipe (held by itself, workers 200 and 300, and
    `extra_holders`), the workers reading their index pipes (write ends held by the parent), worker 400 dead
    (`dead`: its wait status) and not reaped."""
    def index_read(pid):
        return process(pid, 100, worker(pid) if worker else pipe_read(pid, [holder(100)], link="pipe:[%d]" % pid))
    holders = [holder(100), holder(200), holder(300)] + [holder(h) for h in extra_holders]
    parent = process(100, 1, pipe_read(100, holders, link="pipe:[1]"),
                     _py_thread(101, BlockedOn(kind=WaitKind.PY_CONDITION, confidence=Confidence.CERTAIN)))
    return [parent, index_read(200), index_read(300), zombie(400, dead_parent, dead)]


def test_a_parent_reading_a_pipe_whose_live_writers_all_wait_while_a_sibling_died_is_hung():
    # GIVEN a parent whose result pipe only it and its idle workers hold, and a worker killed by SIGKILL
    tree = analyse(*loader())
    # THEN a hang naming the dead worker and the wait it would have served, never the all-clear
    assert tree.deadlocks == [] and tree.exit_status == 5
    ((pid, v),) = tree.verdicts
    assert (pid, v.kind, v.threads) == (100, "server-died", [100])
    (w,) = v.facts.waits
    assert (w.link, w.holders, w.dead) == ("pipe:[1]", [100, 200, 300], [400])
    (d,) = v.facts.dead
    assert (d.pid, d.signal, d.status, d.evidence, d.siblings) == (400, 9, None, "siblings-hold",
                                                                                  [200, 300])
    assert v.facts.confidence == Confidence.LIKELY
    text = render_tree_text(tree)
    assert text.splitlines()[2].startswith(
        "Hung without a deadlock: in PID 100 a process that would have served a wait died; ")
    # (the workers' reads of their index pipes, which only the parent could write, are stalls; the parent's
    # read is said once, by the verdict)
    assert sorted(st.waiter for st in tree.stalls) == [(200, 200), (300, 300)]
    assert ("Server died: in PID 100 Thread 1 (LWP 100) waits in read on pipe:[1], whose other end is held by PID 200, "
            "PID 300 and this process, where every thread but it waits without a timeout on something else: PID 400 "
            "(python3), a child of PID 100 like PIDs 200, 300, which hold the other end, was killed by signal 9 "
            "(SIGKILL) and would most likely have served it; nothing left can end this wait [likely: ") in text
    assert "PID 400 (python3): killed by signal 9 (SIGKILL), and its parent has not reaped it (a zombie)" in text
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    (j,) = doc["verdicts"]
    assert j["kind"] == "server-died" and j["pid"] == 100 and "BrokenProcessPool" in j["advice"]
    # AND a parent alone holding the other end of a child killed by a signal: the child inherited it
    alone = analyse(process(100, 1, pipe_read(100, [holder(100)])), zombie(400, 100, 9))
    ((_, v),) = alone.verdicts
    assert v.facts.dead[0].evidence == "parent-holds" and alone.exit_status == 5


def test_no_server_died_while_a_live_holder_may_serve_or_nothing_ties_the_dead_child_to_the_wait():
    # a worker that runs, or sleeps (its wait ends by itself)
    running = analyse(*loader(worker=lambda pid: ThreadReport(tid=pid, gdb_num=1, gil=GilState.RELEASED)))
    sleeping = syscall_thread(300, "clock_nanosleep")
    sleeping.account = ThreadAccount(state=ThreadState.IDLE, reason=AccountReason.TIMED)
    timed = loader()
    timed[2].report.threads = [sleeping]
    # a holder outside the tree, or one not examined
    outside = analyse(*loader(999))
    traced = analyse(*loader(500), ProcessEntry(pid=500, parent_pid=100, problem="traced"))
    # the dead child exited by itself and no sibling of it holds the other end (the parent alone does)
    lone = analyse(process(100, 1, pipe_read(100, [holder(100)])), zombie(400, 100, 0))
    # a dead child of another process, none of whose siblings holds the other end
    stranger = analyse(*loader(dead_parent=77))
    for why, tree in {"a worker runs": running, "a worker sleeps": analyse(*timed), "a holder outside": outside,
                      "a holder not examined": traced, "exited, nothing ties it": lone,
                      "another's child": stranger}.items():
        assert [v.kind for _, v in tree.verdicts] == [], why
    assert lone.exit_status == 0


def test_a_wait_a_deadlock_explains_is_not_said_to_have_lost_its_server():
    # the parent waits for child 200 that reads a pipe only the parent holds; a dead sibling 400 exists
    tree = analyse(process(100, 1, syscall_thread(100, "wait4", child=200)),
                   process(200, 100, pipe_read(200, [holder(100), holder(300)])),
                   process(300, 100, pipe_read(300, [holder(100), holder(200)], link="pipe:[8]")),
                   zombie(400, 100, 9))
    assert tree.deadlocks and tree.verdicts == [] and tree.exit_status == 3

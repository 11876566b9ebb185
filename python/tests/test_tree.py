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
from pyhang.analysis import tree_forks
from pyhang.model.files import FdHolder, FdObject, FileLock
from pyhang.analysis.syscall_names import NAMES
from pyhang.model.kinds import AccountReason, Confidence, GilState, HazardKind, ThreadState, WaitKind
from pyhang.model.lock_objects import LockObject
from pyhang.model.record import from_data, replace
from pyhang.model.report import BlockedOn, ForkAnalysis, Hazard, NativeFrame, PythonFrame, Report, TargetInfo, \
    ThreadAccount, ThreadReport
from pyhang.model.tree import ProcessEntry, ProcessExit, TreeReport
from pyhang.model.waits import GlibcLock, HolderThreadWait, PythonLockDetail, SyscallWait
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
    # the parent has two threads: either could write to the pipe, and the one in pause() is in no cycle
    busy = analyse(process(100, 1, syscall_thread(100, "wait4", child=-1), syscall_thread(101, "pause")),
                   process(200, 100, pipe_read(200, [holder(100)])))
    assert busy.deadlocks == []
    assert [st["waiter"] for st in busy.stalls] == [(200, 200)] and busy.exit_status == 5
    # another process (not waiting on the cycle) holds the write end too
    shared = analyse(process(100, 1, syscall_thread(100, "wait4", child=200)),
                     process(200, 100, pipe_read(200, [holder(100), holder(300)])),
                     process(300, 100, syscall_thread(300, "pause")))
    assert shared.deadlocks == [] and [st["waiter"] for st in shared.stalls] == [(200, 200)]


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


# ---- stalls: waits nothing serves now ---------------------------------------

def test_a_write_whose_readers_all_wait_elsewhere_is_a_stall_naming_what_they_do():
    # GIVEN a job writing a pipe whose only reader process sleeps
    writer = syscall_thread(100, "write", fd=4, object=FdObject(kind="pipe", link="pipe:[9]", access="write",
                                                                holders=[holder(200, fds=(0,))]))
    tree = analyse(process(100, 1, writer), process(200, 100, syscall_thread(200, "clock_nanosleep")))
    # THEN it is no deadlock, but a stall naming the reader and what its thread does
    assert tree.deadlocks == []
    (st,) = tree.stalls
    assert st["waiter"] == (100, 100) and st["link"] == "pipe:[9]"
    assert st["holders"] == [{"pid": 200, "comm": "python3", "thread_count": 1,
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
    parent = process(100, 1, syscall_thread(100, "pause"))
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
    free = analyse(process(100, 1, syscall_thread(100, "pause")),
                   process(200, 100, pipe_read(200, [holder(100), holder(300)])),
                   process(300, 100, pipe_read(300, [holder(100), holder(200)], link="pipe:[8]")))
    assert free.deadlocks == [] and sorted(st["waiter"] for st in free.stalls) == [(200, 200), (300, 300)]


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


# ---- fork facts across the tree -------------------------------------------

def fork_child(entry, *hazards, checked=()):
    entry.report.fork_analysis = ForkAnalysis(child=True, hazards=list(hazards), checked=list(checked))
    entry.report.fork_hazards = list(hazards)
    return entry


def mutex_wait(tid, owner, flags=()):
    return ThreadReport(tid=tid, gdb_num=1, gil=GilState.RELEASED,
                        blocked_on=BlockedOn(kind=WaitKind.MUTEX, address=0x1000, library="/x/libfix.so",
                                             owners=[owner], glibc=GlibcLock(kind="mutex", flags=list(flags))))


def owner_gone(tid, owner):
    return Hazard(HazardKind.ORPHANED_LOCK, [tid], Confidence.CERTAIN, "owner-gone",
                  {"thread": tid, "kind": "mutex", "address": 0x1000, "library": "/x/libfix.so", "gone": [owner],
                   "internal": None, "child": True})


def named(tid, num, name, *frames):
    return ThreadReport(tid=tid, gdb_num=num, name=name, gil=GilState.RELEASED,
                        native_frames=[NativeFrame(pc=1, library=lib) for lib in frames])


def tree_hazards(tree, kind):
    return [(pid, h) for pid, h in tree.fork_hazards if h.kind == kind]


def test_a_child_lock_owned_by_a_parent_thread_names_the_parents_thread():
    # GIVEN a fork child waiting on a mutex whose owner LWP 101 is a thread of its parent
    parent = process(100, 1, named(100, 1, "main"), named(101, 2, "holder"))
    child = fork_child(process(200, 100, mutex_wait(200, 101)), owner_gone(200, 101))
    tree = analyse(parent, child)
    # THEN the tree's hazard says so, naming the parent's thread, and replaces the child's own
    ((pid, h),) = tree_hazards(tree, HazardKind.ORPHANED_LOCK)
    assert pid == 200 and h.variant == "parent-thread" and h.threads == [200]
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    (j,) = doc["fork_hazards"]
    assert j["processes"] == [200, 100] and j["confidence"] == "certain"
    assert ('its owner LWP 101 is not alive in this process: it is Thread 2 (LWP 101) "holder" of the parent '
            'PID 100 (python3), which held the lock when the parent forked') in j["evidence"]
    text = render_tree_text(tree)
    assert "Fork hazards across processes:\n[orphaned-lock] PID 200 Thread 1 (LWP 200) (certain)" in text
    # the child's own report keeps its own hazard
    assert child.report.fork_hazards[0].variant == "owner-gone"


def test_a_lock_owner_in_the_parent_is_not_claimed_when_it_cannot_be_a_fork_copy():
    # a process-shared mutex: the parent's thread may hold it now; a child not forked; the parent not examined
    for parent, child in (
            (process(100, 1, named(101, 2, "holder")),
             fork_child(process(200, 100, mutex_wait(200, 101, flags=["pshared"])), owner_gone(200, 101))),
            (process(100, 1, named(101, 2, "holder")), process(200, 100, mutex_wait(200, 101))),
            (ProcessEntry(pid=100, parent_pid=1, problem="gone"),
             fork_child(process(200, 100, mutex_wait(200, 101)), owner_gone(200, 101))),
            (process(100, 1, named(102, 2, "other")),
             fork_child(process(200, 100, mutex_wait(200, 101)), owner_gone(200, 101)))):
        if child.report.fork_analysis is None:
            child.report.fork_hazards = [owner_gone(200, 101)]
        tree = analyse(parent, child)
        assert all(h.variant == "owner-gone" for _, h in tree.fork_hazards)
        assert "Fork hazards across processes" not in render_tree_text(tree)


def test_a_child_blocked_in_libgomp_waits_for_pool_threads_that_live_only_in_the_parent():
    gomp = "/usr/lib/x86_64-linux-gnu/libgomp.so.1"
    parent = process(100, 1, named(100, 1, "main"), named(101, 2, "main", "/x/libc.so.6", gomp),
                     named(102, 3, "main", gomp))
    child = fork_child(process(200, 100, named(200, 1, "main", gomp)),
                       Hazard(HazardKind.OPENMP_AFTER_FORK, [200], Confidence.CERTAIN, "",
                              {"library": gomp, "pool": 2, "pool_example": None, "inside": [200]}))
    tree = analyse(parent, child)
    ((pid, h),) = tree_hazards(tree, HazardKind.OPENMP_AFTER_FORK)
    assert pid == 200 and h.variant == "parent-pool" and h.confidence == Confidence.CERTAIN
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    ev = doc["fork_hazards"][0]["evidence"]
    assert ("Thread 1 (LWP 200) is blocked inside libgomp.so.1 waiting for the OpenMP pool's threads; they exist "
            "only in the parent PID 100 (python3), where 2 pool threads are alive (Thread 2 (LWP 101) \"main\", "
            "Thread 3 (LWP 102) \"main\")") in ev
    # a parent with no pool thread left: the child's own hazard stays
    alone = analyse(process(100, 1, named(100, 1, "main")), child)
    assert [h.variant for _, h in alone.fork_hazards] == [""]


def rollup(dirty, shared):
    return {"Rss": dirty + shared, "Pss": dirty + shared // 2, "Private_Dirty": dirty, "Shared_Clean": shared,
            "Shared_Dirty": 0}


def test_fork_children_copying_the_parents_memory_are_summed_up_at_the_parent():
    big = {"where": "__main__.DATA", "type": "list", "length": 400000, "estimated_bytes": 38 << 20,
           "address": 0x7f0000}
    cow = Hazard(HazardKind.COW_REFCOUNT, [], Confidence.LIKELY, "",
                 {"smaps_rollup": rollup(30 << 10, 10 << 10), "containers": [big]})
    c1 = fork_child(process(200, 100, named(200, 1, "w")), cow,
                    checked=[("cow", {"smaps_rollup": rollup(30 << 10, 10 << 10), "containers": 1})])
    c2 = fork_child(process(300, 100, named(300, 1, "w")),
                    checked=[("cow", {"smaps_rollup": rollup(2 << 10, 30 << 10), "containers": 0})])
    tree = analyse(process(100, 1, named(100, 1, "main")), c1, c2)
    hs = tree_hazards(tree, HazardKind.COW_REFCOUNT)
    assert [(pid, h.variant) for pid, h in hs] == [(200, ""), (100, "children")]
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    j = doc["fork_hazards"][-1]
    assert j["pid"] == 100 and j["processes"] == [100, 200, 300] and j["threads"] == []
    assert j["evidence"].startswith("2 fork children of this process hold 32.0 MB of private dirty memory, copied from it "
                                    "or written since fork (smaps_rollup Private_Dirty: PID 200 30.0 MB (shares 10.0 MB), "
                                    "PID 300 2.0 MB")
    assert "PID 200 reads large builtin containers inherited from this process" in j["evidence"]
    assert "__main__.DATA: list of 400000 items, ~38.0 MB" in j["evidence"]
    # no child reading large containers (or no smaps: cores): nothing at the parent
    quiet = analyse(process(100, 1, named(100, 1, "main")), fork_child(process(300, 100, named(300, 1, "w")),
                    checked=[("cow", {"smaps_rollup": rollup(2 << 10, 30 << 10), "containers": 0})]))
    assert quiet.fork_hazards == []


def test_garbage_fork_facts_across_the_tree_give_no_crash():
    odd = fork_child(process(200, 100, named(200, 1, None)),
                     Hazard(HazardKind.ORPHANED_LOCK, [200], Confidence.CERTAIN, "owner-gone", {}),
                     Hazard(HazardKind.OPENMP_AFTER_FORK, [], Confidence.LIKELY, "", {}),
                     checked=[("cow", None), ("cow", {"smaps_rollup": {}})])
    tree = analyse(process(100, 1, named(100, 1, None)), odd, process(300, 200))
    # nothing concluded across processes from them: the child's own two stay as they are
    assert [h.variant for _, h in tree.fork_hazards] == ["owner-gone", ""]


LOCK = 0x7f0000001000


def py_lock_wait(tid, address=LOCK):
    return ThreadReport(tid=tid, gdb_num=1, gil=GilState.RELEASED,
                        blocked_on=BlockedOn(kind=WaitKind.PY_LOCK, address=address, python=PythonLockDetail()))


def python_lock(tid, address=LOCK, kind=WaitKind.PY_LOCK):
    return Hazard(HazardKind.ORPHANED_LOCK, [tid], Confidence.LIKELY, "python-lock",
                  {"thread": tid, "kind": kind, "address": address, "lost": 1})


def in_parent(address=LOCK, type_name="_thread.lock", alive=True, locked=True, refcount=3, tids=(101,)):
    refs = [{"tid": t, "function": "holder", "file": "/srv/app.py", "line": 27} for t in tids]
    return {address: from_data(LockObject, {"object": address, "type_name": type_name, "refcount": refcount,
                                            "alive": alive, "locked": locked, "owner_thread_id": None,
                                            "references": refs})}


def lock_tree(objects, parent_threads=None, child_kind=WaitKind.PY_LOCK):
    parent = process(100, 1, *(parent_threads or (named(100, 1, "main"), named(101, 2, "lock-holder"))))
    child = fork_child(process(200, 100, py_lock_wait(200)), python_lock(200, kind=child_kind))
    parent.lock_objects = objects
    return TreeReport(root_pid=100, processes=[parent, child])


def test_only_parents_of_children_waiting_on_a_lock_with_no_owner_are_asked_again():
    # GIVEN a fork child waiting on a threading.Lock that records no owner: its parent is asked about that address
    assert tree_forks.lock_objects_wanted(lock_tree(None)) == {100: [LOCK]}
    # the common tree (a child's mutex owned by a parent thread; no fork child; the parent not examined): nobody
    parent = process(100, 1, named(100, 1, "main"), named(101, 2, "holder"))
    owned = fork_child(process(200, 100, mutex_wait(200, 101)), owner_gone(200, 101))
    assert tree_forks.lock_objects_wanted(TreeReport(root_pid=100, processes=[parent, owned])) == {}
    not_forked = process(200, 100, py_lock_wait(200))
    not_forked.report.fork_hazards = [python_lock(200)]
    assert tree_forks.lock_objects_wanted(TreeReport(root_pid=100, processes=[parent, not_forked])) == {}
    orphan = fork_child(process(200, 7, py_lock_wait(200)), python_lock(200))
    assert tree_forks.lock_objects_wanted(TreeReport(root_pid=100, processes=[parent, orphan])) == {}


def test_a_childs_lock_still_locked_in_the_parent_names_the_parent_threads_referencing_it():
    # GIVEN the parent's object at the child's lock address: a live, locked threading.Lock a parent thread references
    tree = tree_analysis.analyse(lock_tree(in_parent()))
    ((pid, h),) = tree_hazards(tree, HazardKind.ORPHANED_LOCK)
    # THEN likely (evidence, not a record), naming the parent's thread and where it references the lock
    assert pid == 200 and h.variant == "parent-reference" and h.confidence == Confidence.LIKELY
    assert [t["tid"] for t in h.facts["parent_threads"]] == [101] and h.facts["processes"] == [200, 100]
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    (j,) = doc["fork_hazards"]
    assert j["confidence"] == "likely" and j["processes"] == [200, 100]
    assert j["parent_references"] == [{"pid": 100, "tid": 101, "function": "holder", "file": "/srv/app.py",
                                       "line": 27}]
    assert ('in the parent PID 100 (python3) the object at 0x%x is still a locked threading.Lock (refcount 3): '
            'Thread 2 (LWP 101) "lock-holder" references the lock in File "/srv/app.py", line 27, in holder '
            '(inside `with lock:`, or holding it in a variable)' % LOCK) in j["evidence"]
    text = render_tree_text(tree)
    assert "[orphaned-lock] PID 200 Thread 1 (LWP 200) (likely)" in text
    # the child's own report keeps its own hazard
    assert tree.process(200).report.fork_hazards[0].variant == "python-lock"


def test_a_freed_reused_or_unlocked_address_in_the_parent_names_nobody():
    cases = {
        "freed (refcount field is pymalloc's free-list link)": in_parent(alive=False, refcount=0x7f00000a0b00),
        "reused by another object": in_parent(type_name="dict"),
        "reused by another kind of lock": in_parent(type_name="_thread.RLock"),
        "no lock there at all": {LOCK: LockObject(object=LOCK, type_name=None, alive=False)},
        "released in the parent": in_parent(locked=False),
        "its state unreadable": in_parent(locked=None),
        "referenced by no parent thread": in_parent(tids=()),
        "referenced by a thread the parent's report does not have": in_parent(tids=(999,)),
        "the parent could not be asked": None,
        "the parent was asked about another address": in_parent(address=LOCK + 0x40),
    }
    for why, objects in cases.items():
        tree = tree_analysis.analyse(lock_tree(objects))
        assert [h.variant for _, h in tree.fork_hazards] == ["python-lock"], why


def test_a_parent_thread_waiting_on_the_same_lock_is_not_named_as_its_holder():
    # GIVEN two parent threads referencing the lock: one holds it, the other waits to acquire it
    waiting = py_lock_wait(102)
    waiting.gdb_num = 3
    tree = tree_analysis.analyse(lock_tree(in_parent(tids=(102, 101)),
                                           parent_threads=(named(100, 1, "main"), named(101, 2, "lock-holder"),
                                                           waiting)))
    ((_, h),) = tree_hazards(tree, HazardKind.ORPHANED_LOCK)
    assert [t["tid"] for t in h.facts["parent_threads"]] == [101]
    # and a waiter alone names nobody
    tree = tree_analysis.analyse(lock_tree(in_parent(tids=(102,)), parent_threads=(named(100, 1, "main"), waiting)))
    assert [h.variant for _, h in tree.fork_hazards] == ["python-lock"]


IDENT = 0x7f00000a1640


def rlock_owner_gone(tid, address=LOCK):
    return Hazard(HazardKind.ORPHANED_LOCK, [tid], Confidence.CERTAIN, "owner-gone",
                  {"thread": tid, "kind": WaitKind.PY_RLOCK, "address": address, "library": None, "gone": [],
                   "owner_ident": IDENT, "internal": None, "child": True, "descriptor": {"address": IDENT, "tid": 0}})


def rlock_tree(seen):
    parent = process(100, 1, named(100, 1, "main"), named(101, 2, "holder"))
    parent.lock_objects = {LOCK: from_data(LockObject, dict({"object": LOCK, "type_name": "_thread.RLock",
                                                             "refcount": 2, "alive": True, "locked": True,
                                                             "owner_thread_id": IDENT, "owner_tid": 101,
                                                             "references": []}, **seen))}
    child = process(200, 100, ThreadReport(tid=200, gdb_num=1, gil=GilState.RELEASED,
                                           blocked_on=BlockedOn(kind=WaitKind.PY_RLOCK, address=LOCK)))
    return TreeReport(root_pid=100, processes=[parent, fork_child(child, rlock_owner_gone(200))])


def test_a_childs_rlock_owned_by_a_pthread_t_that_owns_it_in_the_parent_names_that_parent_thread():
    # GIVEN a child's RLock whose recorded owner is no thread of the child (fork zeroed the descriptor's TID)
    assert tree_forks.lock_objects_wanted(rlock_tree({})) == {100: [LOCK]}
    # WHEN the parent's RLock at that address is owned by the same pthread_t, its thread LWP 101
    tree = tree_analysis.analyse(rlock_tree({}))
    ((pid, h),) = tree_hazards(tree, HazardKind.ORPHANED_LOCK)
    # THEN that thread is named, certain: both copies record the owner
    assert pid == 200 and h.variant == "parent-owner" and h.confidence == Confidence.CERTAIN
    (j,) = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))["fork_hazards"]
    assert ("its owner pthread_t 0x%x is no thread of this process: in the parent PID 100 (python3) the same RLock "
            "(fork keeps addresses) is still owned by pthread_t 0x%x, which is Thread 2 (LWP 101) \"holder\""
            % (IDENT, IDENT)) in j["evidence"]
    assert j["processes"] == [200, 100]


def test_a_childs_rlock_names_nobody_when_the_parent_has_no_such_owner_there():
    for why, seen in {"another owner": {"owner_thread_id": IDENT + 0x1000},
                      "freed": {"alive": False},
                      "another type": {"type_name": "_thread.lock"},
                      "the owner is no Python thread of the parent": {"owner_tid": None},
                      "the owner is no thread in the parent's report": {"owner_tid": 999}}.items():
        tree = tree_analysis.analyse(rlock_tree(seen))
        assert [h.variant for _, h in tree.fork_hazards] == ["owner-gone"], why


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
    assert (pid, v.kind, v.threads, sorted(v.facts["workers"])) == (100, "pool-task-lost", [100], [200, 300])
    assert idle.exit_status == 5
    # THEN not while one worker is inside a task (its frames above the worker loop), or the task handler runs
    busy = analyse(parent, _worker(200, (QUEUES_PY, "get")), _worker(300, ("/srv/app.py", "work")))
    assert busy.verdicts == []
    handler = _py_thread(101, None, (POOL_PY, "Pool._handle_tasks"))
    running = analyse(process(100, 1, parent.report.threads[0], handler), _worker(200, (QUEUES_PY, "get")))
    assert running.verdicts == []


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
    (w,) = v.facts["waits"]
    assert (w["link"], w["holders"], w["dead"]) == ("pipe:[1]", [100, 200, 300], [400])
    (d,) = v.facts["dead"]
    assert (d["pid"], d["signal"], d["status"], d["evidence"], d["siblings"]) == (400, 9, None, "siblings-hold",
                                                                                  [200, 300])
    assert v.facts["confidence"] == Confidence.LIKELY
    text = render_tree_text(tree)
    assert text.splitlines()[2].startswith(
        "Hung without a deadlock: in PID 100 a process that would have served a wait died; ")
    # (the workers' reads of their index pipes, which only the parent could write, are stalls; the parent's
    # read is said once, by the verdict)
    assert sorted(st["waiter"] for st in tree.stalls) == [(200, 200), (300, 300)]
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
    assert v.facts["dead"][0]["evidence"] == "parent-holds" and alone.exit_status == 5


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

"""The tree's closed world, without gdb, on synthetic reports: a thread its
report calls idle (waiting for work on an object of its process) can be fed
only by the other threads of its process, so a pool parent whose every
thread waits on its stuck workers is one knot with them (likely); a poll on
several fds waits for any holder of any of them; a wait with a timeout
makes an edge that is likely, never certain; a wait for any child is
accounted for when the tree knows every child, and not when it cannot."""
import json

import harness
from pyhang.analysis import tree as tree_analysis
from pyhang.model.files import FdObject
from pyhang.model.kinds import AccountReason, Confidence, GilState, ThreadState, TreeEdgeKind, WaitKind
from pyhang.model.proc_record import ChildProcess, ProcSummary
from pyhang.model.record import replace, to_data
from pyhang.model.report import BlockedOn, ThreadAccount, ThreadReport
from pyhang.model.tree import TreeReport
from pyhang.render.tree import render_tree_text, tree_json
from test_tree import analyse, holder, pipe_read, process, syscall_thread


def idle(tid):
    """A thread its report calls idle: it waits for work on a condition of its process."""
    return ThreadReport(tid=tid, gdb_num=2, gil=GilState.RELEASED,
                        blocked_on=BlockedOn(kind=WaitKind.PY_CONDITION, confidence=Confidence.CERTAIN),
                        account=ThreadAccount(state=ThreadState.IDLE, reason=AccountReason.WAITS_FOR_WORK))


def running(tid):
    return ThreadReport(tid=tid, gdb_num=3, gil=GilState.RELEASED)


def pool(*parent_extra):
    """A parent reading its workers' result pipe (which it holds too) beside an idle feeder, and two
    workers reading a task pipe only the parent and they hold."""
    workers = [process(pid, 100, pipe_read(pid, [holder(100)] + [holder(o) for o in (200, 201) if o != pid],
                                           link="pipe:[1]")) for pid in (200, 201)]
    parent = process(100, 1, pipe_read(100, [holder(100), holder(200), holder(201)], link="pipe:[2]"), idle(101),
                     *parent_extra)
    return [parent] + workers


def test_a_parent_whose_every_thread_waits_on_its_stuck_workers_is_one_likely_knot_through_its_idle_thread():
    # GIVEN a parent whose idle thread could write the workers' pipe, were it given work
    tree = analyse(*pool())
    # THEN nothing the tree holds can give it: one knot of the three processes, likely (which of the parent's
    # threads would feed it is not known, only that one of them must)
    (d,) = tree.deadlocks
    assert d.pids == [100, 200, 201] and (100, 101) in d.nodes and d.confidence == Confidence.LIKELY
    assert {e.kind for e in d.edges if e.waiter == (100, 101)} == {TreeEdgeKind.WORK_GIVER}
    assert tree.exit_status == 3
    # AND the work-giver edges are the deadlock's, not the tree's (each idle thread would add one per thread)
    assert TreeEdgeKind.WORK_GIVER not in {e.kind for e in tree.edges}
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    assert "work-giver" in {e["kind"] for e in doc["deadlocks"][0]["edges"]}
    text = render_tree_text(tree)
    assert "Found one deadlock across 3 processes (likely), 4 threads:" in text
    # what the parent holds is said once, at its first thread, not again for each of its threads
    held = "(its process holds the other end of pipe:[1], on which PID 200 (LWP 200), PID 201 (LWP 201) wait)"
    assert text.count(held) == 1


def test_a_thread_of_the_parent_that_runs_or_waits_for_outside_events_can_feed_the_idle_one_no_knot():
    for free in (running(102), syscall_thread(102, "accept4"), syscall_thread(102, "epoll_wait")):
        tree = analyse(*pool(free))
        assert tree.deadlocks == [], free


def test_an_idle_thread_alone_in_its_process_is_never_proven_stuck():
    # the idle thread's process has no other thread: who would feed it is outside what the graph knows
    lone = process(300, 1, idle(300))
    reader = process(400, 300, pipe_read(400, [holder(300)]))
    assert analyse(lone, reader, root=300).deadlocks == []


def poll(tid, *objects, timeout=None):
    fds = [{"fd": 10 + i, "direction": "read", "object": o} for i, o in enumerate(objects)]
    return syscall_thread(tid, "poll", fds=fds, timeout=timeout)


def pipe_of(*pids, link="pipe:[5]"):
    return FdObject(kind="pipe", link=link, access="read", holders=[holder(p) for p in pids])


def test_a_poll_on_several_pipes_waits_for_any_holder_of_any_of_them():
    # GIVEN a parent polling two pipes, one written by child 200, one by child 300; each child reads a pipe only
    # the parent holds
    def tree(third):
        return analyse(process(100, 1, poll(100, pipe_of(200, link="pipe:[5]"), pipe_of(300, link="pipe:[6]"))),
                       process(200, 100, pipe_read(200, [holder(100)])), process(300, 100, third))
    # WHEN both children are stuck: one knot of the three
    (d,) = tree(pipe_read(300, [holder(100)], link="pipe:[8]")).deadlocks
    assert d.pids == [100, 200, 300] and d.confidence == Confidence.CERTAIN
    # WHEN one child can still write: no deadlock (the poll ends when it does)
    assert tree(running(300)).deadlocks == []


def test_a_poll_that_also_watches_an_event_fd_or_a_file_is_never_proven_stuck():
    for other in (FdObject(kind="anon", link="anon_inode:[eventfd]"), FdObject(kind="file", path="/tmp/x")):
        tree = analyse(process(100, 1, poll(100, pipe_of(200), other)), process(200, 100, pipe_read(200, [holder(100)])))
        assert tree.deadlocks == [], other


def test_a_wait_with_a_timeout_makes_a_likely_edge_never_a_certain_deadlock():
    # GIVEN a parent that polls its child's pipe for 5 s at a time (a DataLoader's loop), and the child reading a
    # pipe only the parent holds: stuck unless the parent's timeout path writes
    parent = process(100, 1, poll(100, pipe_of(200), timeout={"ns": 5_000_000_000}))
    (d,) = analyse(parent, process(200, 100, pipe_read(200, [holder(100)]))).deadlocks
    assert d.confidence == Confidence.LIKELY
    assert {e.confidence for e in d.edges if e.waiter == (100, 100)} == {Confidence.LIKELY}


def wait_any(tid):
    t = syscall_thread(tid, "wait4", child=-1)
    return replace(t, account=ThreadAccount(state=ThreadState.ELSEWHERE, reason=AccountReason.CHILD))


def test_a_wait_for_any_child_is_accounted_for_when_the_tree_knows_every_child():
    child = process(200, 100, running(200))
    # a live tree lists every child: the wait is the tree's to follow
    assert tree_analysis.analyse(TreeReport(root_pid=100, processes=[process(100, 1, wait_any(100)), child])) \
        .unaccounted == []
    # a bounded tree, or cores of gdb's (no record of the children), do not know them all
    bounded = TreeReport(root_pid=100, processes=[process(100, 1, wait_any(100)), child], truncated=2)
    assert tree_analysis.analyse(bounded).unaccounted == [(100, 100)]
    cores = [process(100, 1, wait_any(100), kind="core"), process(200, 100, running(200), kind="core")]
    assert tree_analysis.analyse(TreeReport(root_pid=100, processes=cores)).unaccounted == [(100, 100)]
    # a core of pyhang gcore's records them: accounted for when each is in the tree, not when one is missing
    recorded = process(100, 1, wait_any(100), kind="core")
    recorded.report.target.proc_record = ProcSummary(children=[ChildProcess(pid=200, state="R")])
    assert tree_analysis.analyse(TreeReport(root_pid=100, processes=[recorded, cores[1]])).unaccounted == []
    recorded.report.target.proc_record = ProcSummary(children=[ChildProcess(pid=200), ChildProcess(pid=201)])
    assert tree_analysis.analyse(TreeReport(root_pid=100, processes=[recorded, cores[1]])).unaccounted == [(100, 100)]


def test_the_idle_threads_of_a_process_past_the_bound_are_never_proven_stuck():
    # bounded: an edge from each idle thread to every other thread would be n squared
    many = [idle(1000 + i) for i in range(tree_analysis.MAX_WORK_GIVERS)]
    tree = analyse(*pool(*many))
    assert tree.deadlocks == [] and tree.exit_status != 3


def readers_and(fourth):
    """Three readers each reading a pipe whose write ends all three and process 500 hold, beside `fourth`,
    the one thread of process 500."""
    readers = [process(pid, 1, pipe_read(pid, [holder(o) for o in (200, 201, 202, 500)], link="pipe:[%d]" % pid))
               for pid in (200, 201, 202)]
    return readers + [process(500, 1, fourth)]


def sleeping(tid, ns, absolute=False):
    timeout = {"ns": ns, "absolute": absolute}
    if absolute:
        timeout["left_ns"] = ns
    return syscall_thread(tid, "clock_nanosleep", timeout=timeout)


def test_a_knot_whose_other_holder_sleeps_long_or_waits_for_a_signal_is_likely_and_names_it():
    hour = 3600 * 10 ** 9
    for fourth, facts in ((sleeping(500, hour, absolute=True), {"call": "clock_nanosleep", "left_ns": hour}),
                          (sleeping(500, hour), {"call": "clock_nanosleep", "requested_ns": hour}),
                          (syscall_thread(500, "pause"), {"call": "pause"})):
        tree = analyse(*readers_and(fourth), root=1)
        # THEN the readers are one knot: likely (the sleeper may write when it wakes), the sleeper named
        (d,) = tree.deadlocks
        assert d.pids == [200, 201, 202] and d.confidence == Confidence.LIKELY, fourth
        assert to_data(d.sleepers) == [dict(facts, pid=500, tid=500)]
        assert {e.owner[0] for e in d.edges} == {200, 201, 202} and tree.exit_status == 3
        doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
        assert doc["deadlocks"][0]["sleepers"] == [dict(facts, pid=500, tid=500)]
        assert "unless it wakes and serves them: PID 500 " in render_tree_text(tree)


def test_a_holder_that_sleeps_briefly_runs_or_waits_for_clients_unties_the_knot():
    for fourth in (sleeping(500, 10 ** 9, absolute=True), sleeping(500, 10 ** 9), running(500),
                   syscall_thread(500, "epoll_wait"), syscall_thread(500, "rt_sigtimedwait", timeout={"ns": 10 ** 9})):
        tree = analyse(*readers_and(fourth), root=1)
        assert tree.deadlocks == [], fourth


def test_a_knot_that_holds_with_every_thread_awake_names_no_sleeper():
    # the fourth process sleeps an hour but holds none of the pipes: the knot is certain, as before
    readers = [process(pid, 1, pipe_read(pid, [holder(o) for o in (200, 201, 202)], link="pipe:[%d]" % pid))
               for pid in (200, 201, 202)]
    tree = analyse(*readers, process(500, 1, sleeping(500, 3600 * 10 ** 9)), root=1)
    (d,) = tree.deadlocks
    assert d.confidence == Confidence.CERTAIN and d.sleepers == []

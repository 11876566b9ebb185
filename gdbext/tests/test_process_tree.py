"""`pyhang report --tree` examines a process and its descendants, one
report each, and finds the deadlocks across them: a parent waiting for a
child that reads a pipe only the parent can write, a subprocess with both
pipes full, a socketpair where each waits for the other; a Pool('fork')
parent joining stuck workers is reported process by process, one knot with
its workers through its idle threads; a DataLoader-style parent sees its fork
workers copy its memory, and the knot its polling makes with them.  From one core per process, the same processes with
their parents, and waits on pipes and sockets are not followed (cores record
no fd table), said so."""
import json
import os
import sys

import pytest

import harness

sys.path[0:0] = [os.path.join(harness.build_dir(), "python"), os.path.join(harness.ROOT, "python")]
from pyhang.analysis.syscall_names import NAMES  # noqa: E402

PY = "/usr/bin/python3.11"
NUMBERS = {name: nr for nr, name in NAMES.items()}


def start(scenario, mode, python=PY):
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "process_tree.py"), mode])
    children = [c for c in s.truth["children"] if c["syscall"]]
    harness.wait_processes_parked([c["pid"] for c in children],
                                  calls={c["pid"]: NUMBERS[c["syscall"]] for c in children})
    return s


def tree_of(pid):
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", pid)
    assert status in (0, 3, 4, 5), err
    doc = harness.validated_tree(json.loads(out))
    assert doc["exit_status"] == status
    return status, doc


def processes(doc):
    return {p.get("target", {}).get("pid") or p.get("pid"): p for p in doc["processes"]}


def syscall_of(process, tid):
    t = next(t for t in process["threads"] if t["tid"] == tid)
    return t["blocked_on"]["syscall"]["name"] if t["blocked_on"] and t["blocked_on"]["kind"] == "syscall" else None


def cycle_params():
    """Each mode on Debian's 3.11; the socketpair (its peer found through the socket's inode) on unstable's 3.14 in
    its root too."""
    return [pytest.param(m, PY, id=m) for m in ("pipe", "subprocess", "socketpair")] + \
        [pytest.param("socketpair", p.values[0], id="socketpair-" + p.id) for p in harness.interpreter_params_of()[1:]]


@pytest.mark.parametrize("mode, python", cycle_params())
def test_a_deadlock_across_two_processes_is_found_live_and_cores_are_reported(scenario, mode, python, tmp_path):
    # GIVEN a parent and a child each waiting for the other in a system call
    s = start(scenario, mode, python)
    (child,) = s.truth["children"]
    # WHEN pyhang reports on the tree of the parent
    status, doc = tree_of(s.pid)
    # THEN both processes are reported, the child with its parent
    got = processes(doc)
    assert doc["root_pid"] == s.pid and set(got) == {s.pid, child["pid"]}
    assert got[child["pid"]]["parent_pid"] == s.pid
    assert syscall_of(got[s.pid], s.pid) == s.truth["syscall"]
    assert syscall_of(got[child["pid"]], child["pid"]) == child["syscall"]
    # AND the cycle through them is one certain deadlock across the two processes: each has one thread
    (d,) = doc["deadlocks"]
    assert d["processes"] == sorted(s.truth["deadlock"]) and d["confidence"] == "certain", d
    assert sorted(d["threads"]) == sorted([s.pid, child["pid"]])
    assert status == 3
    if mode == "pipe":
        # AND in gdb, the text puts the deadlock first and names both ends of the pipe
        text, _ = harness.run_gdb_marked("pyhang report --tree", pid=s.pid)
        lines = text.splitlines()
        assert lines[0] == "pyhang report --tree: process %d and 1 descendant" % s.pid
        assert lines[2] == "Found one deadlock across 2 processes (certain), 2 threads:"
        assert ("its write end is held only by PID %d (tree-parent), whose thread LWP %d \"tree-parent\" waits in "
                "wait4 for PID %d (this process)" % (s.pid, s.pid, child["pid"])) in text
        assert "PID %d (tree-parent): 1 thread, Python 3.11" % child["pid"] in text
        assert text.count("pyhang report: live process") == 2
    # AND from one core per process: the same two processes and their parents, read from the cores
    cores = [s.gcore(), harness.gcore(child["pid"], s.tmp)]
    status, out, err = harness.pyhang_cli("report", "--json", *harness.core_options(python), *cores)
    doc = harness.validated_tree(json.loads(out))
    got = processes(doc)
    assert set(got) == {s.pid, child["pid"]} and got[child["pid"]]["parent_pid"] == s.pid
    assert doc["root_pid"] == s.pid
    assert syscall_of(got[child["pid"]], child["pid"]) == child["syscall"]
    # AND the waits on pipes and sockets are not followed (cores record no fd
    # table), which the tree says, never claiming more: a wait4 alone is no cycle
    assert {"pid": child["pid"], "tid": child["pid"]} in doc["unfollowed"]
    assert doc["deadlocks"] == []
    if mode == "subprocess":
        return   # (pyhang gcore does not stop a process inside a write: test_gcore_command)
    # AND the cores pyhang gcore --tree writes keep the fd tables and the sockets' peers: the live cycle
    status, _, err = harness.pyhang_cli("gcore", "--tree", "-p", s.pid, "-o", str(tmp_path / "core"))
    assert status == 0, err
    status, out, err = harness.pyhang_cli("report", "--json", *harness.core_options(python),
                                          *[str(tmp_path / ("core.%d" % pid)) for pid in (s.pid, child["pid"])])
    doc = harness.validated_tree(json.loads(out))
    (d,) = doc["deadlocks"]
    assert d["processes"] == sorted(s.truth["deadlock"]) and d["confidence"] == "certain", d
    assert status == doc["exit_status"] == 3, err


def test_a_pool_parent_joining_stuck_workers_reports_every_worker(scenario):
    s = start(scenario, "pool")
    status, doc = tree_of(s.pid)
    got = processes(doc)
    workers = [c["pid"] for c in s.truth["children"]]
    assert set(workers) <= set(got)
    for pid in workers:
        assert got[pid]["parent_pid"] == s.pid
        (t,) = [t for t in got[pid]["threads"] if t["tid"] == pid]
        assert t["blocked_on"]["syscall"]["name"] == "read"
        assert any(f["function"] == "stuck_task" for f in t["python_frames"])
        # the pipe's write end is held by the parent (and the other worker), none of whose threads waits on it
        holders = {h["pid"] for h in t["blocked_on"]["syscall"]["object"]["holders"]}
        assert s.pid in holders
    # the parent joins in Pool.join
    main = next(t for t in got[s.pid]["threads"] if t["tid"] == s.pid)
    assert any(f["function"].endswith("join") for f in main["python_frames"])
    # AND the workers, each reading the pipe whose write end the other holds too, make no cycle
    # with each other: the parent could write.  But every thread of the parent waits on the workers
    # (their results, their exit, Pool.join) or idles for work only those threads could give: one
    # knot of all three processes, likely (an idle thread's feeders are not known, only its process)
    (d,) = doc["deadlocks"]
    assert d["processes"] == sorted(s.truth["deadlock"]) and d["confidence"] == "likely", d
    assert s.pid in d["threads"] and status == 3
    assert "work-giver" in {e["kind"] for e in d["edges"]}


def test_a_zombie_child_is_one_line_and_a_non_python_child_is_reported_with_native_frames(scenario):
    # GIVEN a parent with a zombie child (exited, not reaped) and a `sleep` child (no Python)
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "process_tree.py"), "zombie"])
    zombie, sleeper = (next(c["pid"] for c in s.truth["children"] if c["role"] == r) for r in ("zombie", "non-python"))
    harness.wait_processes_parked([sleeper], calls={sleeper: NUMBERS["clock_nanosleep"]})
    status, doc = tree_of(s.pid)
    got = processes(doc)
    # THEN the zombie is one line saying how it ended (it exited with status 0), and the rest of the tree is reported
    assert "zombie" in got[zombie]["problem"] and got[zombie]["parent_pid"] == s.pid
    assert (got[zombie]["exit"]["status"], got[zombie]["exit"]["signal"]) == (0, None)
    assert got[sleeper]["target"]["python_version"] is None
    (t,) = got[sleeper]["threads"]
    assert t["native_frames"] and t["blocked_on"]["syscall"]["name"] == "clock_nanosleep"
    assert syscall_of(got[s.pid], s.pid) == "read"
    # AND the parent reads a pipe whose write end only it holds: not accounted for, never the all-clear
    (t,) = [t for t in got[s.pid]["threads"] if t["tid"] == s.pid]
    assert (t["account"]["state"], t["account"]["reason"]) == ("unaccounted", "own-process")
    assert status == doc["exit_status"] == 4
    # AND the zombie, which exited by itself and whose siblings hold nothing of that pipe, is not taken for the
    # server that died: the wait stays unaccounted for, listed as such
    assert doc["verdicts"] == [] and {"pid": s.pid, "tid": s.pid} in doc["unaccounted"]
    assert doc["headline"].startswith("Not accounted for: 1 thread waits on what pyhang cannot name"), doc["headline"]


def test_a_dataloader_parent_sees_its_workers_copy_its_memory_and_no_cycle_among_them(scenario):
    # GIVEN a DataLoader-style parent whose two fork workers read its large list, then block
    # reading a shard pipe whose write end the parent and both workers hold
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "fork_dataloader.py")], ready_timeout=120)
    workers = {w["pid"]: w for w in s.truth["workers"]}
    harness.wait_processes_parked(list(workers), calls={pid: NUMBERS["read"] for pid in workers})
    # WHEN pyhang reports on the live tree
    status, doc = tree_of(s.pid)
    got = processes(doc)
    assert set(workers) <= set(got)
    for pid, w in workers.items():
        assert got[pid]["parent_pid"] == s.pid
        assert syscall_of(got[pid], w["tid"]) == "read"
        t = next(t for t in got[pid]["threads"] if t["tid"] == w["tid"])
        assert [f["function"] for f in t["python_frames"]][:2] == ["load_sample", "worker_loop"]
    # THEN the parent's copy-on-write hazard sums its workers' private dirty memory and names the list
    (h,) = [h for h in doc["fork_hazards"] if h["kind"] == "cow-refcount" and h["pid"] == s.pid]
    assert sorted(h["processes"][1:]) == sorted(workers) and h["threads"] == []
    assert h["evidence"].startswith("2 fork children of this process hold ")
    assert "%s: list of %d items" % (s.truth["where"], s.truth["length"]) in h["evidence"]
    assert "numpy" in h["advice"]
    # AND each worker keeps its own
    assert {h["pid"] for h in doc["fork_hazards"] if h["kind"] == "cow-refcount"} == {s.pid} | set(workers)
    # AND the workers, each reading the pipe the other holds too, make no cycle with each other:
    # the parent could write; but the parent's threads only poll for the workers' batches (a
    # timeout that loops) or idle for work: one likely knot of the three, never the all-clear
    (d,) = doc["deadlocks"]
    assert d["processes"] == sorted([s.pid] + list(workers)) and d["confidence"] == "likely", d
    assert status == 3
    # AND from one core per process: the same processes; no smaps in a core, so no memory claim
    cores = [s.gcore()] + [harness.gcore(pid, s.tmp) for pid in sorted(workers)]
    status, out, err = harness.pyhang_cli("report", "--json", *cores)
    doc = harness.validated_tree(json.loads(out))
    got = processes(doc)
    assert doc["root_pid"] == s.pid and set(got) == {s.pid} | set(workers)
    for pid, w in workers.items():
        assert got[pid]["parent_pid"] == s.pid and syscall_of(got[pid], w["tid"]) == "read"
    assert not [h for h in doc["fork_hazards"] if h["kind"] == "cow-refcount"]
    assert doc["deadlocks"] == []


def test_a_child_that_cannot_be_stopped_is_one_line_naming_its_tracer_and_a_bounded_tree_says_how_many_it_left_out(
        scenario):
    # GIVEN a parent whose child is already traced by its other child (one tracer per process)
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "process_tree.py"), "traced"])
    role = {c["role"]: c["pid"] for c in s.truth["children"]}
    harness.wait_processes_parked(list(role.values()), calls={pid: NUMBERS["read"] for pid in role.values()})
    # WHEN the tree is examined
    status, doc = tree_of(s.pid)
    got = processes(doc)
    # THEN the traced child is one line naming its tracer, and the rest of the tree is reported
    assert got[role["traced"]]["problem"].startswith("process %d is traced by process %d (" % (
        role["traced"], role["tracer"])), got[role["traced"]]
    assert got[role["traced"]]["parent_pid"] == s.pid
    for pid in (s.pid, role["tracer"]):
        assert got[pid]["target"]["python_version"] == s.truth["python"]
        assert syscall_of(got[pid], pid) == "read"
    # AND a tree bounded to fewer processes than it has says how many it did not examine
    from pyhang import processes as trees  # noqa: E402 (after the build's path is set)
    from pyhang.render import tree as render_tree  # noqa: E402
    bounded = trees.live_tree(s.pid, limit=1)
    assert [p.pid for p in bounded.processes] == [s.pid, role["traced"]] and bounded.truncated == 1
    assert "1 more descendant was not examined" in render_tree.render_tree_text(bounded)

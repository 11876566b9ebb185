"""`pyhang report --dot` draws the wait-for graph in Graphviz: a deadlock's
edges red between the threads the program recorded, a tree's processes in
frames of their own with the edges across them; every verdict and fork
hazard a box its threads are linked to (a starving pool, a lock copied
locked by fork, a blocked event loop, waits on other processes), a thread
waiting for itself an edge to itself; titled with the report's headline,
each thread under the program's own innermost frame; `dot` renders it."""
import json
import os
import re
import subprocess

import pytest

import harness

PY = "/usr/bin/python3.11"


def rendered(dot_text, fmt="svg"):
    """`dot -T<fmt>` of the text: it must parse and render."""
    r = subprocess.run(["dot", "-T" + fmt], input=dot_text.encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr.decode()
    return r.stdout


def red_edges(dot_text):
    return {(int(a), int(b)) for a, b in re.findall(r"p\d+_t(\d+) -> p\d+_t(\d+) \[.*#c0392b", dot_text)}


@pytest.fixture(autouse=True)
def graphviz():
    if subprocess.run(["which", "dot"], stdout=subprocess.DEVNULL).returncode != 0:
        pytest.skip("graphviz is not installed (testdata/setup.sh --tests installs it)")


def test_a_python_lock_deadlock_is_two_red_edges_between_the_recorded_threads_live_and_from_a_core(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py")])
    a = next(t["tid"] for t in s.truth["threads"] if t["role"] == "holds-a-wants-b")
    b = next(t["tid"] for t in s.truth["threads"] if t["role"] == "holds-b-wants-a")
    for where, target in (("live", ["-p", s.pid]), ("core", [s.gcore(), PY])):
        status, out, err = harness.pyhang_cli("report", "--dot", *target)
        assert status == 3, (where, err)
        assert out.startswith("digraph pyhang {") and "\\nFound one deadlock (likely)." in out, where   # its headline
        assert red_edges(out) == {(a, b), (b, a)}, (where, out)
        assert "__main__.lock_a" in out and "__main__.lock_b" in out
        assert rendered(out).lstrip().startswith(b"<?xml") and rendered(out, "png")[:4] == b"\x89PNG"


def test_the_tree_draws_each_process_in_its_frame_and_the_pipe_cycle_across_them(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "pipe_stderr.py")], env={"PYTHONUNBUFFERED": "1"})
    child = s.truth["child"]
    status, out, err = harness.pyhang_cli("report", "--tree", "--dot", "-p", s.pid)
    assert status == 3, err
    assert "subgraph cluster_%d {" % s.pid in out and "subgraph cluster_%d {" % child in out
    assert red_edges(out) == {(s.pid, child), (child, s.pid)}, out
    rendered(out)


def test_the_dot_option_goes_without_json():
    status, out, err = harness.pyhang_cli("report", "--dot", "--json", "-p", "1")
    assert status == 2 and "--dot goes without --json" in err


def unquoted(text):
    return text.replace('\\"', '"').replace("\\\\", "\\")


def parsed(dot_text):
    """(title lines, {node: label lines}, [(from, to, attributes)]) of a DOT text pyhang wrote."""
    title = re.search(r'^\s*label="((?:[^"\\]|\\.)*)"; labelloc', dot_text, re.M).group(1)
    nodes = {m.group(1): unquoted(m.group(2)).split("\\n")
             for m in re.finditer(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)"', dot_text, re.M)}
    edges = re.findall(r"^\s*(\w+) -> (\w+) \[(.*)\];$", dot_text, re.M)
    return unquoted(title).split("\\n"), nodes, edges


def drawn(s, pid=None, python=PY):
    """The DOT text of `pyhang report --dot -p PID` (rendered by Graphviz) and the same process's JSON report."""
    pid = pid or s.pid
    _, out, err = harness.pyhang_cli("report", "--dot", "-p", pid)
    assert out.startswith("digraph pyhang {"), err
    assert rendered(out).lstrip().startswith(b"<?xml")
    return out, harness.report_json(pid=pid)


def findings_of(dot_text, pid, tid):
    """The first line of each finding box the thread's box is linked to, most serious first."""
    _, nodes, edges = parsed(dot_text)
    return [nodes[b][0] for a, b, _ in edges if a == "p%d_t%d" % (pid, tid) and b.startswith("p%d_f" % pid)]


def assert_titled_with_the_headline(dot_text, doc):
    title, _, _ = parsed(dot_text)
    assert " ".join(title[1:]) == doc["headline"], (title, doc["headline"])


def test_a_starving_pool_is_drawn_as_its_finding_not_as_owner_unknown_and_each_worker_at_the_programs_line(scenario):
    # GIVEN a ThreadPoolExecutor whose two workers wait for futures of their own pool (and other waits)
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "py_objects.py")])
    out, doc = drawn(s)
    assert_titled_with_the_headline(out, doc)
    _, nodes, edges = parsed(out)
    for role in ("pool-worker-1", "pool-worker-2"):
        tid = harness.role_tid(s, role)
        # THEN each worker is linked to the starvation finding, and to no "owner unknown" note
        assert findings_of(out, s.pid, tid) == ["A ThreadPoolExecutor starves itself"], (role, out)
        assert not [b for a, b, _ in edges if a == "p%d_t%d" % (s.pid, tid) and "unknown" in b], role
        # AND its box names the program's own innermost frame first, the library frame it waits in after it
        label = nodes["p%d_t%d" % (s.pid, tid)]
        assert label[1].startswith("py_objects.py:"), label
        assert label[2].startswith("(in ") and "py_objects.py" not in label[2], label


def test_a_lock_copied_locked_by_fork_is_drawn_in_the_child(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "fork_mutex.py"),
                  harness.fixture_path("libforkfixture.so")])
    child = s.truth["child"]
    out, doc = drawn(s, pid=child["pid"])
    assert_titled_with_the_headline(out, doc)
    assert doc["headline"].startswith("Hung without a deadlock: a lock was copied locked by fork"), doc["headline"]
    # THEN the child's waiter is linked to that finding first, and to the lock's owner being gone
    assert findings_of(out, child["pid"], child["tid"]) == ["A lock was copied locked by fork",
                                                            "A lock's owner is gone"], out


def test_an_event_loop_blocked_in_a_task_is_drawn_at_the_coroutines_own_call(scenario):
    script = os.path.join(harness.SCENARIOS, "loop_blocked.py")
    s = scenario([PY, "-u", script, "socket"])
    out, doc = drawn(s)
    assert_titled_with_the_headline(out, doc)
    loop = harness.role_tid(s, "loop")
    assert findings_of(out, s.pid, loop) == ["An asyncio event loop is blocked"], out
    _, nodes, _ = parsed(out)
    label = nodes["p%d_t%d" % (s.pid, loop)]
    assert label[1] == "loop_blocked.py:%d in handler" % s.truth["call_line"], label
    assert label[2].startswith("(in socket.py:"), label


def test_a_thread_waiting_for_itself_is_a_red_edge_to_itself(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "self_deadlock.py"), "with"])
    out, doc = drawn(s)
    assert_titled_with_the_headline(out, doc)
    waiter = harness.role_tid(s, "waits-for-itself")
    assert red_edges(out) == {(waiter, waiter)}, out


def test_waits_on_another_process_are_drawn_as_that_finding(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "tcp_peers.py")])
    out, doc = drawn(s)
    assert_titled_with_the_headline(out, doc)
    assert doc["headline"].startswith("Waits on PID %d" % s.truth["child"]), doc["headline"]
    for role in ("accepted", "backlog"):
        tid = harness.role_tid(s, role)
        assert findings_of(out, s.pid, tid) == ["Waits on other processes"], (role, out)

"""`pyhang report --dot` draws the wait-for graph in Graphviz: a deadlock's
edges red between the threads the program recorded, a tree's processes in
frames of their own with the edges across them; `dot` renders it."""
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
        assert out.startswith("digraph pyhang {") and "1 deadlock" in out, where
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

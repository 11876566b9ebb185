"""`pyhang merge` without gdb, on synthetic pyhang-report/1 and
pyhang-tree/1 documents: processes with the same Python stacks (threads as
a multiset, line numbers included) are one group, groups are listed largest
first, the single process that differs is called out with its file, garbage
files are one line each and the rest is still merged, and the JSON document
follows docs/pyhang-merge-1.schema.json."""
import json
import os
import shutil
import subprocess

import jsonschema
import pytest

from pyhang.analysis import merge as merge_analysis
from pyhang.render.merge import merge_json, problem_line, render_merge_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "python", "bin", "pyhang")
BUILD = os.environ.get("PYHANG_BUILD_DIR") or os.path.join(ROOT, "build")
SCHEMA = os.path.join(ROOT, "docs", "pyhang-merge-1.schema.json")

BARRIER = [("wait", "/opt/job/dist.py", 40), ("step", "/opt/job/train.py", 88), ("<module>", "/opt/job/train.py", 120)]
LOADER = [("get", "/usr/lib/python3.11/queue.py", 171), ("run", "/opt/job/loader.py", 12)]


def thread(tid, name, frames):
    return {"tid": tid, "gdb_num": 1, "name": "python3", "python_name": name, "gil": "released",
            "python_frames": [{"function": f, "file": fi, "line": li} for f, fi, li in frames],
            "native_frames": [], "blocked_on": None}


def report(pid, *threads):
    return {"schema": "pyhang-report/1", "target": {"kind": "live", "pid": pid, "core": None},
            "threads": list(threads), "gil": {}, "deadlocks": [], "edges": [], "fork_hazards": [],
            "verdicts": [], "warnings": []}


def rank(pid, main=BARRIER, loader=LOADER, helper=True):
    threads = [thread(pid, "MainThread", main), thread(pid + 1, "Thread-1 (loader)", loader)]
    if helper:   # a native helper thread: runs no Python, not compared
        threads.append(thread(pid + 2, None, []))
    return report(pid, *threads)


def merged(docs):
    m = merge_analysis.Merge()
    for source, doc in docs:
        merge_analysis.read(m, source, doc if isinstance(doc, str) else json.dumps(doc))
    return merge_analysis.analyse(m)


def validated(doc):
    with open(SCHEMA) as f:
        schema = json.load(f)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    jsonschema.validate(json.loads(json.dumps(doc)), schema)
    return doc


def test_the_one_rank_elsewhere_is_called_out_against_the_others():
    stuck = [("recv", "/opt/job/dist.py", 77), ("step", "/opt/job/train.py", 91), ("<module>", "/opt/job/train.py", 120)]
    docs = [("node%d-%d.json" % (i // 4, 100 * i), rank(100 * i, helper=i % 2 == 0)) for i in range(1, 8)]
    docs.append(("node1-800.json", rank(800, main=stuck)))
    m = merged(docs)
    assert [g.size for g in m.groups] == [7, 1]
    (d,) = m.differences
    assert d.member.source == "node1-800.json" and d.member.pid == 800 and d.thread == "MainThread"
    text = render_merge_text(m)
    assert ("node1-800.json / PID 800 differs: its MainThread is in recv (/opt/job/dist.py:77) "
            "while 7 others are in wait (/opt/job/dist.py:40)") in text
    assert text.index("Group 1: 7 processes") < text.index("Group 2: 1 process")
    doc = validated(merge_json(m))
    assert doc["odd"][0]["file"] == "node1-800.json" and doc["groups"][0]["size"] == 7


def test_line_numbers_count_and_thread_order_does_not():
    moved = [("wait", "/opt/job/dist.py", 41)] + BARRIER[1:]
    a = rank(1)
    b = rank(2)
    b["threads"].reverse()              # another order, other TIDs: the same stacks
    m = merged([("a", a), ("b", b), ("c", rank(3, main=moved))])
    assert [g.size for g in m.groups] == [2, 1] and m.groups[1].members[0].pid == 3
    assert "wait (/opt/job/dist.py:41) while 2 others are in wait (/opt/job/dist.py:40)" in render_merge_text(m)


def test_the_same_innermost_frame_by_another_path_says_where_the_stacks_part():
    deeper = BARRIER[:1] + [("retry", "/opt/job/dist.py", 60)] + BARRIER[1:]
    m = merged([("a", rank(1)), ("b", rank(2)), ("c", rank(3, main=deeper))])
    assert ("c / PID 3 differs: its MainThread is in wait (/opt/job/dist.py:40) as 2 others are, by another path: "
            "4 frames where theirs have 3, parting at retry (/opt/job/dist.py:60) against wait (/opt/job/dist.py:40)"
            ) in render_merge_text(m)


def test_a_missing_thread_is_a_difference_and_no_majority_names_no_odd_one():
    m = merged([("a", rank(1)), ("b", rank(2)), ("c", report(3, thread(3, "MainThread", BARRIER)))])
    (d,) = m.differences
    assert d.stack == () and d.thread == "Thread-1 (loader)"
    assert "c / PID 3 differs: it has no thread in get (/usr/lib/python3.11/queue.py:171), where 2 others have " \
           "Thread-1 (loader)" in render_merge_text(m)
    # two processes, each its own: nobody is the odd one
    two = merged([("a", rank(1)), ("b", rank(2, main=LOADER))])
    assert [g.size for g in two.groups] == [1, 1] and two.differences == []
    same = merged([("a", rank(1)), ("b", rank(2))])
    assert "All 2 processes have the same Python stacks." in render_merge_text(same)


def test_a_tree_document_counts_each_process_and_notes_those_not_examined():
    a, b = rank(10), rank(11)
    a["parent_pid"], b["parent_pid"] = 1, 10
    tree = {"schema": "pyhang-tree/1", "root_pid": 10, "deadlocks": [], "fork_hazards": [],
            "processes": [a, b, {"pid": 12, "problem": "a zombie", "parent_pid": 10}]}
    m = merged([("tree.json", tree), ("r.json", rank(20))])
    assert [g.size for g in m.groups] == [3] and [m_.source for m_ in m.groups[0].members] == \
        ["tree.json", "tree.json", "r.json"]
    assert [problem_line(p) for p in m.problems] == ["pyhang merge: tree.json: PID 12 was not examined: a zombie"]


@pytest.mark.parametrize("text, says", [
    ("{not json", "not JSON"),
    ('{"schema": "pyhang-error/1", "error": {}}', "not a pyhang report (schema 'pyhang-error/1'"),
    ("[1, 2]", "not a pyhang report (schema None"),
    ('{"schema": "pyhang-report/1", "threads": 7}', "a pyhang-report/1 document pyhang did not write"),
    ('{"schema": "pyhang-tree/1"}', "a pyhang-tree/1 document pyhang did not write"),
])
def test_garbage_is_one_problem_and_the_rest_is_still_merged(text, says):
    m = merged([("bad.json", text), ("good.json", rank(5))])
    assert len(m.problems) == 1 and problem_line(m.problems[0]).startswith("pyhang merge: bad.json: " + says)
    assert [g.size for g in m.groups] == [1]


def test_odd_frames_and_threads_inside_a_report_are_skipped_not_fatal():
    doc = rank(1)
    doc["threads"] += ["x", {"python_frames": ["y", {"function": "f"}]}, {"python_frames": None}]
    m = merged([("a", doc)])
    assert len(m.members[0].threads) == 3      # MainThread, the loader, and f with what it has
    validated(merge_json(m))


def run_cli(*args):
    r = subprocess.run([CLI, "merge"] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=dict(os.environ, PYHANG_BUILD_DIR=BUILD))
    return r.returncode, r.stdout, r.stderr


def test_the_command_line_merges_files_reports_bad_ones_on_stderr_and_fails_only_when_none_read(tmp_path):
    paths = []
    for i, doc in enumerate([rank(1), rank(2), rank(3, main=LOADER)]):
        paths.append(tmp_path / ("host%d-%d.json" % (i, i + 1)))
        paths[-1].write_text(json.dumps(doc))
    (tmp_path / "junk.json").write_text("garbage")
    missing = tmp_path / "missing.json"
    status, out, err = run_cli(*paths, tmp_path / "junk.json", missing)
    # (files that could not be read leave the merge incomplete: never an all-clear)
    assert status == 4
    assert err.splitlines() == ["pyhang merge: %s: not JSON (Expecting value: line 1 column 1 (char 0))"
                                % (tmp_path / "junk.json"),
                                "pyhang merge: %s: cannot be read (No such file or directory)" % missing]
    assert "%s / PID 3 differs: its MainThread is in get" % paths[2] in out
    status, out, err = run_cli("--json", *paths)
    doc = validated(json.loads(out))
    assert status == 0 and doc["processes"] == 3 and [g["size"] for g in doc["groups"]] == [2, 1]
    status, out, err = run_cli(missing, tmp_path / "junk.json")
    assert status == 1 and out == "" and "no process could be read from the 2 files given" in err
    assert "Traceback" not in err
    status, out, err = run_cli("-p", "1", paths[0])
    assert status == 2 and "-p does not go with `merge`" in err
    status, out, err = run_cli("--help")
    assert status == 0 and out.startswith("usage: pyhang merge REPORT.json...")


def test_the_groups_as_a_picture_the_odd_one_red_with_where_it_differs(tmp_path):
    stuck = [("recv", "/opt/job/dist.py", 77), ("step", "/opt/job/train.py", 91), ("<module>", "/opt/job/train.py", 120)]
    files = []
    for i in range(1, 5):
        path = tmp_path / ("rank%d.json" % i)
        path.write_text(json.dumps(rank(100 * i, main=stuck if i == 4 else BARRIER)))
        files.append(str(path))
    r = subprocess.run([CLI, "merge", "--dot"] + files, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=dict(os.environ, PYHANG_BUILD_DIR=BUILD))
    assert r.returncode == 0, r.stderr
    boxes = {l.split()[0]: l for l in r.stdout.splitlines() if l.strip().startswith("g") and "label=" in l
             and "->" not in l}
    assert "Group 1: 3 processes" in boxes["g0"] and "#c0392b" not in boxes["g0"]
    assert "Group 2: 1 process" in boxes["g1"] and "#c0392b" in boxes["g1"]
    (edge,) = [l for l in r.stdout.splitlines() if "g1 -> g0" in l]
    assert "recv (/opt/job/dist.py:77)" in edge and "where 3 others are in" in edge
    if shutil.which("dot"):
        svg = subprocess.run(["dot", "-Tsvg"], input=r.stdout, stdout=subprocess.PIPE, text=True)
        assert svg.returncode == 0 and "<svg" in svg.stdout
    bad = subprocess.run([CLI, "merge", "--dot", "--json"] + files, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=dict(os.environ, PYHANG_BUILD_DIR=BUILD))
    assert bad.returncode == 2 and "--dot goes without --json" in bad.stderr

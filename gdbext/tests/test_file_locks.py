"""File locks: a flock or fcntl lock wait says the file, what it wants
(exclusive or shared; the byte range of an fcntl lock, read from the
struct flock the call was given) and which process holds it; alone it is a
wait on another process (exit 4), as a tree the cycle across processes (3),
and from cores gdb wrote, which record no fd table, never an all-clear (4);
the cores `pyhang gcore` writes keep /proc's fd tables and locks and give
the live answer.  On Debian's 3.11 and on unstable's 3.14 in its root (its
cores read with the root as the sysroot)."""
import json
import os

import pytest

import harness


def start(scenario, python, mode):
    return scenario([python, "-u", os.path.join(harness.SCENARIOS, "file_locks.py"), mode])


def thread(doc, tid):
    return next(t for t in doc["threads"] if t["tid"] == tid)


@pytest.mark.parametrize("python", harness.interpreter_params_of())
def test_a_flock_cycle_across_two_processes_is_one_deadlock_as_a_tree_and_each_side_waits_on_the_other(scenario, python,
                                                                                                        tmp_path):
    s = start(scenario, python, "cycle")
    child = s.truth["child"]["pid"]
    # WHEN the parent alone is looked at
    status, out, _ = harness.pyhang_cli("report", "--json", "-p", s.pid)
    doc = harness.validated_report(json.loads(out))
    t = thread(doc, s.pid)
    # THEN it waits to take an exclusive flock on B, which the child holds: a wait on that process (exit 4)
    sc = t["blocked_on"]["syscall"]
    assert (sc["name"], sc["lock_mode"], sc["object"]["path"]) == ("flock", "exclusive", s.truth["b"]), sc
    assert "to take an exclusive flock; locked by PID %d" % child in t["blocked_on"]["detail"]
    assert t["account"] == {"state": "elsewhere", "reason": "file-lock", "finding": "unaccounted", "threads": [],
                            "pids": [child]}
    assert status == doc["exit_status"] == 4 and doc["headline"].startswith("Waits on PID %d: " % child)
    # AND the tree from the parent finds the cycle, certain, through both files
    status, out, _ = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    tree = harness.validated_tree(json.loads(out))
    (d,) = tree["deadlocks"]
    assert sorted(d["processes"]) == sorted([s.pid, child]) and d["confidence"] == "certain", d
    assert {e["kind"] for e in d["edges"]} == {"file-lock"} and status == tree["exit_status"] == 3
    # AND from one core per process: the file of each fd is not recorded, so nothing is followed: never an
    # all-clear, each thread unaccounted
    cores = [harness.gcore(pid, s.tmp) for pid in (s.pid, child)]
    status, out, _ = harness.pyhang_cli("report", "--json", *harness.core_options(python), *cores)
    tree = harness.validated_tree(json.loads(out))
    assert status == tree["exit_status"] == 4 and tree["deadlocks"] == []
    assert sorted(u["pid"] for u in tree["unaccounted"]) == sorted([s.pid, child])
    assert tree["headline"].startswith("Not accounted for: 2 threads wait on "), tree["headline"]
    # AND the cores pyhang gcore --tree writes keep the fd tables and /proc/locks: the live tree's cycle
    status, out, err = harness.pyhang_cli("gcore", "--tree", "-p", s.pid, "-o", str(tmp_path / "core"))
    assert status == 0, err
    recorded = [str(tmp_path / ("core.%d" % pid)) for pid in (s.pid, child)]
    status, out, _ = harness.pyhang_cli("report", "--json", *harness.core_options(python), *recorded)
    tree = harness.validated_tree(json.loads(out))
    (d,) = tree["deadlocks"]
    assert sorted(d["processes"]) == sorted([s.pid, child]) and d["confidence"] == "certain", d
    assert {e["kind"] for e in d["edges"]} == {"file-lock"} and status == tree["exit_status"] == 3


@pytest.mark.parametrize("python", harness.interpreter_params_of())
def test_an_fcntl_range_wait_says_the_range_live_and_from_a_core(scenario, python, tmp_path):
    s = start(scenario, python, "range")
    child = s.truth["child"]["pid"]
    status, out, err = harness.pyhang_cli("gcore", "-p", s.pid, "-o", str(tmp_path / "core"))
    assert status == 0, err
    recorded = harness.report_doc(*harness.core_options(python), str(tmp_path / "core"), python)[1]
    for where, doc in [*harness.cli_live_and_core_reports(s, python), ("pyhang-gcore", recorded)]:
        t = thread(doc, s.pid)
        sc = t["blocked_on"]["syscall"]
        # THEN the range it waits to write-lock, read from the struct flock it passed, live and from the core
        assert sc["name"] == "fcntl" and sc["lock"] is True, (where, sc)
        assert sc["lock_range"] == {"type": "write", "whence": "start", "start": s.truth["start"],
                                    "length": s.truth["length"]}, (where, sc)
        assert "to write-lock bytes 120-129 (fcntl)" in t["blocked_on"]["detail"], (where, t["blocked_on"]["detail"])
        # AND live and from pyhang gcore's core the holder is named; a core gdb wrote knows no holder: not
        # accounted for, never an all-clear
        if where != "core":
            assert t["account"]["pids"] == [child] and t["account"]["reason"] == "file-lock"
        else:
            assert t["account"]["reason"] == "no-fd-table"
        assert doc["exit_status"] == 4, where

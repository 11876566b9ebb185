"""File locks: a flock or fcntl lock wait says the file, what it wants
(exclusive or shared; the byte range of an fcntl lock, read from the
struct flock the call was given) and which process holds it; alone it is a
wait on another process (exit 4), as a tree the cycle across processes (3),
and from cores, which record no fd table, never an all-clear (4)."""
import json
import os

import harness

PY = "/usr/bin/python3.11"


def start(scenario, mode):
    return scenario([PY, "-u", os.path.join(harness.SCENARIOS, "file_locks.py"), mode])


def thread(doc, tid):
    return next(t for t in doc["threads"] if t["tid"] == tid)


def test_a_flock_cycle_across_two_processes_is_one_deadlock_as_a_tree_and_each_side_waits_on_the_other(scenario):
    s = start(scenario, "cycle")
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
    status, out, _ = harness.pyhang_cli("report", "--json", *cores)
    tree = harness.validated_tree(json.loads(out))
    assert status == tree["exit_status"] == 4 and tree["deadlocks"] == []
    assert sorted(u["pid"] for u in tree["unaccounted"]) == sorted([s.pid, child])
    assert tree["headline"].startswith("Not accounted for: 2 threads wait on "), tree["headline"]


def test_an_fcntl_range_wait_says_the_range_live_and_from_a_core(scenario):
    s = start(scenario, "range")
    child = s.truth["child"]["pid"]
    for where, doc in harness.cli_live_and_core_reports(s, PY):
        t = thread(doc, s.pid)
        sc = t["blocked_on"]["syscall"]
        # THEN the range it waits to write-lock, read from the struct flock it passed, live and from the core
        assert sc["name"] == "fcntl" and sc["lock"] is True, (where, sc)
        assert sc["lock_range"] == {"type": "write", "whence": "start", "start": s.truth["start"],
                                    "length": s.truth["length"]}, (where, sc)
        assert "to write-lock bytes 120-129 (fcntl)" in t["blocked_on"]["detail"], (where, t["blocked_on"]["detail"])
        # AND live the holder is named; a core knows no holder: not accounted for, never an all-clear
        if where == "live":
            assert t["account"]["pids"] == [child] and t["account"]["reason"] == "file-lock"
        else:
            assert t["account"]["reason"] == "no-fd-table"
        assert doc["exit_status"] == 4, where

"""A knot of OR-waits across processes, live: three processes each reading a
pipe whose write ends all three hold (and nobody else) are one deadlock with
all three, never their pairwise cycles, and the parent waiting for any of
them to exit hangs off it, not in it; one more holder of the pipes that
wakes often outside the knot could write to any of them, so there is no
deadlock; one that sleeps an hour serves none of them until it wakes: a
likely deadlock that names it (testdata/scenarios/pipe_knot.py).  The knot on Debian's 3.11 and
on unstable's 3.14 in its root, live, from the cores `pyhang gcore --tree`
writes (the live knot), and from a reader's core gdb writes (no fd table:
nothing followed, never an all-clear)."""
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
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "pipe_knot.py"), mode])
    readers = [r["pid"] for r in s.truth["readers"]]
    calls = {pid: NUMBERS["read"] for pid in readers}
    calls[s.pid] = NUMBERS["wait4"]
    free = [s.truth["free"]] if s.truth["free"] is not None else []
    harness.wait_processes_parked(readers + free + [s.pid], calls=calls)
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    doc = harness.validated_tree(json.loads(out))
    assert doc["exit_status"] == status, err
    return s, status, doc


def check_knot(s, status, doc):
    readers = s.truth["readers"]
    # THEN exactly one deadlock, with all three processes and their threads
    (d,) = doc["deadlocks"]
    assert d["processes"] == sorted(r["pid"] for r in readers) and d["confidence"] == "certain", d
    assert sorted(d["threads"]) == sorted(r["tid"] for r in readers)
    # AND each reader's wait is its own pipe, any of whose two other holders could end it
    for r in readers:
        mine = [e for e in d["edges"] if e["waiter_pid"] == r["pid"]]
        assert {e["link"] for e in mine} == {r["link"]} and {e["kind"] for e in mine} == {"pipe-other-end"}
        assert sorted(e["owner_pid"] for e in mine) == sorted(o["pid"] for o in readers if o is not r)
    # AND the parent in os.wait() waits on the knot without being part of it
    assert d["waiting"] == [{"pid": s.pid, "tid": harness.role_tid(s, "parent")}]
    assert status == 3 and doc["headline"] == "Found one deadlock across 3 processes (certain), 3 threads."


@pytest.mark.parametrize("python", harness.interpreter_params_of())
def test_three_readers_holding_each_others_write_ends_are_one_deadlock_with_the_parent_waiting_on_it(scenario, python,
                                                                                                      tmp_path):
    s, status, doc = start(scenario, "knot", python)
    check_knot(s, status, doc)
    pids = [s.pid] + [r["pid"] for r in s.truth["readers"]]
    # AND from the cores pyhang gcore --tree writes, which keep each process's fd table: the same knot
    status, _, err = harness.pyhang_cli("gcore", "--tree", "-p", s.pid, "-o", str(tmp_path / "core"))
    assert status == 0, err
    recorded = [str(tmp_path / ("core.%d" % pid)) for pid in pids]
    status, out, err = harness.pyhang_cli("report", "--json", *harness.core_options(python), *recorded)
    tree = harness.validated_tree(json.loads(out))
    assert tree["exit_status"] == status, err
    check_knot(s, status, tree)
    # AND from a reader's core gdb writes, no fd table: its pipe is not followed, never an all-clear
    reader = s.truth["readers"][0]
    status, doc = harness.report_doc(*harness.core_options(python), harness.gcore(reader["pid"], s.tmp), python)
    t = next(t for t in doc["threads"] if t["tid"] == reader["tid"])
    assert (t["account"]["state"], t["account"]["reason"]) == ("unaccounted", "no-fd-table"), t["account"]
    assert status == 4 and doc["deadlocks"] == [], doc["headline"]


def fourth_holds_every_pipe(s, doc):
    """The fourth child holds the write end of every reader's pipe (what makes these two the variants)."""
    got = {p["target"]["pid"]: p for p in doc["processes"] if "target" in p}
    for r in s.truth["readers"]:
        t = next(t for t in got[r["pid"]]["threads"] if t["tid"] == r["tid"])
        obj = t["blocked_on"]["syscall"]["object"]
        assert obj["link"] == r["link"] and s.truth["free"] in {h["pid"] for h in obj["holders"]}


def test_one_more_holder_that_wakes_often_outside_the_knot_unties_it(scenario):
    s, status, doc = start(scenario, "free")
    fourth_holds_every_pipe(s, doc)
    # THEN it could write to any of them whenever it wakes: no deadlock, and every wait is on a process that runs
    assert doc["deadlocks"] == [] and doc["unaccounted"] == [], doc["headline"]
    assert status == 0 and doc["headline"] == "No deadlock found across processes.", doc["headline"]


@pytest.mark.parametrize("python", harness.interpreter_params_of())
def test_a_knot_whose_only_other_holder_sleeps_an_hour_is_a_likely_deadlock_that_names_the_sleeper(scenario, python,
                                                                                                    tmp_path):
    s, status, doc = start(scenario, "asleep", python)
    fourth_holds_every_pipe(s, doc)
    readers = s.truth["readers"]
    # THEN the three readers are one knot, likely (the sleeper may write when it wakes), that names the sleeper
    (d,) = doc["deadlocks"]
    assert d["processes"] == sorted(r["pid"] for r in readers) and d["confidence"] == "likely", d
    (z,) = d["sleepers"]
    assert (z["pid"], z["tid"], z["call"]) == (s.truth["free"], s.truth["free"], "clock_nanosleep"), z
    assert 0 < z["left_ns"] <= 3600 * 10 ** 9
    # AND no edge of the knot leads to the sleeper: its members wait on one another
    assert {e["owner_pid"] for e in d["edges"]} == {r["pid"] for r in readers}
    assert "sleeps" in d["advice"] and status == 3, (status, d["advice"])
    assert doc["headline"] == "Found one deadlock across 3 processes (likely), 3 threads.", doc["headline"]
    _, text, _ = harness.pyhang_cli("report", "--tree", "-p", s.pid)
    line = next(x for x in text.splitlines() if "unless it wakes and serves them" in x)
    assert "PID %d " % s.truth["free"] in line and "sleeps (clock_nanosleep) for another" in line, line
    # AND from the cores pyhang gcore --tree writes (each with its fd table and the clock): the same knot and sleeper
    status, _, err = harness.pyhang_cli("gcore", "--tree", "-p", s.pid, "-o", str(tmp_path / "core"))
    assert status == 0, err
    pids = [s.pid] + [r["pid"] for r in readers] + [s.truth["free"]]
    status, out, err = harness.pyhang_cli("report", "--json", *harness.core_options(python),
                                          *[str(tmp_path / ("core.%d" % pid)) for pid in pids])
    tree = harness.validated_tree(json.loads(out))
    (c,) = tree["deadlocks"]
    assert (c["processes"], c["confidence"], [(x["pid"], x["call"]) for x in c["sleepers"]]) == \
        (d["processes"], "likely", [(s.truth["free"], "clock_nanosleep")]), c
    assert status == tree["exit_status"] == 3, err

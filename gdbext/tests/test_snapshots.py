"""A snapshot is the record of what gdb answered the analysis's questions
(pyhang-snapshot/2): replayed without gdb or the target, it gives the report
gdb gave at the same stop; and the analysis asks a handful of questions per
thread, not one per decoder and thread twice over."""
import json
import os

import pytest

import harness

DEBIAN = "/usr/bin/python3.11"


def snapshot_and_report(tmp_path, **target):
    """(snapshot document, report gdb printed) from one gdb session, one stop."""
    path = tmp_path / "snapshot.json"
    out = harness.run_gdb(["pyhang snapshot %s" % path, "echo %s\\n" % harness.BEGIN, "pyhang report --json",
                           "echo %s\\n" % harness.END], **target)
    text = out[out.index(harness.BEGIN) + len(harness.BEGIN):out.index(harness.END)]
    doc = json.loads(text[text.index("{"):])
    with open(path) as f:
        return json.load(f), harness.validated_report(doc), path


def replayed(path):
    status, out, err = harness.pyhang_cli("report", "--snapshot", path, "--json")
    doc = json.loads(out)
    # (the report's own status: py_locks.py's lock held across a sleep is a hang, 5, since held-across-sleep)
    assert status == doc["exit_status"] and status in (0, 3, 4, 5), err
    return doc


def comparable(report):
    """A report with the fields that differ between two runs left out: none
    but the time it was made."""
    return {k: v for k, v in report.items() if k not in ("generated_at",)}


@pytest.mark.parametrize("scenario_args", [
    pytest.param(("lock_abba.py",), id="abba"),
    pytest.param(("py_locks.py",), id="python-locks"),
    pytest.param(("syscall_waits.py",), id="syscall-waits"),
])
def test_replayed_snapshot_gives_the_report_gdb_gave_at_the_same_stop(scenario, tmp_path, scenario_args):
    # GIVEN a hung program, and one gdb session that saves a snapshot and prints the report
    s = scenario([DEBIAN, "-u", os.path.join(harness.SCENARIOS, scenario_args[0])] + list(scenario_args[1:]))
    for where, target in (("live", {"pid": s.pid}), ("core", {"executable": DEBIAN, "core": s.gcore()})):
        document, report, path = snapshot_and_report(tmp_path, **target)
        assert document["schema"] == "pyhang-snapshot/2", where
        # WHEN the snapshot is analysed again, with no gdb and no target
        again = replayed(path)
        # THEN the same report, to the last field
        assert comparable(again) == comparable(report), where


def test_a_report_asks_a_handful_of_questions_per_thread(scenario, tmp_path):
    # GIVEN 256 Python threads parked on one Event, 5 frames deep
    s = scenario([DEBIAN, "-u", os.path.join(harness.SCENARIOS, "many_threads.py"), "256", "5"])
    document, report, _ = snapshot_and_report(tmp_path, pid=s.pid)
    assert len(report["threads"]) == 257
    # THEN every answer the collector gave is in the snapshot, each question once,
    # and there are no more than a handful per thread
    asked = {}
    for question, _args, _answer in document["answers"]:
        asked[question] = asked.get(question, 0) + 1
    assert asked["threads"] <= 2 and asked["target"] == 1 and asked["python"] == 1
    # (each question about threads takes all of them at once)
    assert sum(asked.values()) <= 20, asked
    assert len(next(args for q, args, _ in document["answers"] if q == "python_locks")[0]) >= 256

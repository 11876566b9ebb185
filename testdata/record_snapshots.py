#!/usr/bin/env python3
"""Record snapshots of real hangs for the analysis tests (python/tests).

Each case starts a scenario from testdata/, attaches gdb with pyhang, and in
one gdb session saves `pyhang snapshot` (everything collected from the
target) and `pyhang report --json` (what gdb made of it).  The file
testdata/snapshots/CASE.json holds both with the truth the scenario
recorded about itself:

    {"case", "argv", "truth", "snapshot", "report"}

The analysis tests replay the snapshot without gdb and compare with the
report and the truth.  Recording again rewrites the report, never what
python/tests/test_analysis.py expects of each case (SCENARIOS, written by
hand in the scenario's roles): a case whose scenario changed needs that
checked by hand.  Run again after a change to what collection records:

    testdata/record_snapshots.py [CASE ...]      (needs a configured build: testdata/setup.sh)

gdb loads the Python side from the build tree, so the build is brought up
to date first.

After a change to what a report says of the same answers (the analysis, the
JSON), the recorded reports are made again from the recorded snapshots,
with no scenario, no gdb and no build (the checkout's pyhang package, as
python/tests imports it), and nothing else in the files moves:

    testdata/record_snapshots.py --rerender [CASE ...]

python/tests/test_analysis.py fails while a recorded report differs from
what its snapshot gives; `git diff testdata/snapshots` is then the change
to check by hand.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

DEBIAN = "/usr/bin/python3.11"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snapshots")


def _py(script, *args):
    return [DEBIAN, "-u", os.path.join(harness.SCENARIOS, script)] + [str(a) for a in args]


# case name → (argv, which process of the scenario to look at: "self" or a truth key with a "pid")
CASES = {
    "lock_abba_unrecorded": (_py("lock_abba.py", "Lock"), "self"),
    "rlock_abba": (_py("lock_abba.py", "RLock"), "self"),
    "native_abba": ([harness.fixture_path("prog_abba")], "self"),
    "driver_rwlock_write": (_py("driver_deadlock.py", harness.fixture_path("libdriverfixture.so"), "w"), "self"),
    "driver_rwlock_read": (_py("driver_deadlock.py", harness.fixture_path("libdriverfixture.so"), "r"), "self"),
    "gil_held_in_native": (_py("gil_held_in_native.py", 2), "self"),
    "native_locks": (_py("native_locks.py", harness.fixture_path("liblockfixture.so")), "self"),
    "fork_mutex_child": (_py("fork_mutex.py", harness.fixture_path("libforkfixture.so")), "child"),
    "lock_held_across_join": (_py("lock_join.py", "with"), "self"),
    "exit_joins_stuck_thread": (_py("lock_join.py", "exit"), "self"),
    "python_objects": (_py("py_objects.py"), "self"),
    "buffered_io": (_py("py_buffered.py", "threads"), "self"),
    "buffered_io_fork_child": (_py("py_buffered.py", "fork"), "child"),
}


def record(case):
    argv, which = CASES[case]
    with harness.Scenario(argv) as s:
        pid = s.pid if which == "self" else s.truth[which]["pid"]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "snapshot.json")
            # one gdb session, one stop: what depends on the moment (a sleep's
            # time left) is the same in both
            out = harness.run_gdb(["pyhang snapshot %s" % path, "echo %s\\n" % harness.BEGIN,
                                   "pyhang report --json", "echo %s\\n" % harness.END], pid=pid)
            text = out[out.index(harness.BEGIN) + len(harness.BEGIN):out.index(harness.END)]
            report = harness.validated_report(json.loads(text[text.index("{"):]))
            with open(path) as f:
                snapshot = json.load(f)
    doc = {"case": case, "argv": [os.path.relpath(a, harness.ROOT) if a.startswith(harness.ROOT) else a
                                  for a in argv],
           "truth": s.truth, "snapshot": snapshot, "report": report}
    write(case, doc)
    print("recorded %s: %d threads" % (case, len(report["threads"])))


def write(case, doc):
    with open(os.path.join(OUT, case + ".json"), "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")


def rerender(case):
    """The recorded report of `case` made again from its recorded snapshot (the
    pyhang_version it was recorded with kept: the test leaves it out)."""
    if os.path.join(harness.ROOT, "python") not in sys.path:
        sys.path.insert(0, os.path.join(harness.ROOT, "python"))
    from pyhang.analysis.report import from_snapshot
    from pyhang.render.json import dumps
    with open(os.path.join(OUT, case + ".json")) as f:
        doc = json.load(f)
    report = json.loads(dumps(from_snapshot(doc["snapshot"])[1]))
    if "pyhang_version" in doc["report"]:
        report["pyhang_version"] = doc["report"]["pyhang_version"]
    else:
        report.pop("pyhang_version", None)
    changed = report != doc["report"]
    doc["report"] = harness.validated_report(report)
    write(case, doc)
    print("%s %s" % ("re-rendered" if changed else "unchanged", case))


def main(argv):
    if argv[:1] == ["--rerender"]:
        for case in argv[1:] or sorted(CASES):
            rerender(case)
        return
    subprocess.run(["cmake", "--build", harness.build_dir()], check=True, stdout=subprocess.DEVNULL)
    os.makedirs(OUT, exist_ok=True)
    for case in argv or sorted(CASES):
        record(case)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Every collector is one collector built from parts (pyhang.native_facts.Collector): where the threads
come from (gdb, /proc, gdb over a pipe) and what reads the memory change, the facts must not.  One parked
deadlock is asked by gdb's collector in gdb (`pyhang snapshot`), the command line's (gdb over a pipe, the
memory read here), the one that stops it itself (pyhang.stopped, the command line's default) and the one
that never stops it (--no-stop); its core by gdb and by the command line.
Each one's answers are kept as a snapshot (facts.Recording) and compared on what must agree."""
import json
import os
import subprocess
import sys

import harness

sys.path[0:0] = [os.path.join(harness.build_dir(), "python"), os.path.join(harness.ROOT, "python")]
from pyhang.model.facts import Replay  # noqa: E402

PY = "/usr/bin/python3.11"

# The command line in this Python, each analysis's collector recorded: argv[2] the snapshot's file, the
# rest pyhang's arguments.
_RECORDED_CLI = r"""
import os, sys
sys.path[:0] = [os.path.join(sys.argv[1], "python"), os.path.join(os.environ["PYHANG_BUILD_DIR"], "python")]
out, argv = sys.argv[2], sys.argv[3:]
from pyhang import cli
from pyhang.analysis import report
from pyhang.model.facts import Recording
plain = report.analyse

def recorded(facts, **kw):
    recording = Recording(facts)
    made = plain(recording, **kw)
    if not os.path.exists(out):
        with open(out, "w") as f:
            f.write(recording.dumps())
    return made

report.analyse = recorded
sys.exit(cli.main(argv))
"""


def _cli_facts(path, *argv):
    r = subprocess.run([sys.executable, "-c", _RECORDED_CLI, harness.ROOT, path, *map(str, argv)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300,
                       env=dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir()))
    assert "Traceback" not in r.stderr and os.path.exists(path), r.stderr[-3000:]
    return _replay(path)


def _gdb_facts(path, **target):
    # the debug files the command line names frames from (gdb_batch.gdb_env), for frames named alike
    out = harness.run_gdb(["pyhang snapshot " + path], env={"PYHANG_DEBUG_FILE_DIRECTORY": "/usr/lib/debug"},
                          **target)
    assert os.path.exists(path), out[-3000:]
    return _replay(path)


def _replay(path):
    with open(path) as f:
        return Replay(json.load(f))


def _answer(facts, question):
    """The answer to `question` the analysis asked first (the threads: of every thread)."""
    for key, answer in facts.answers.items():
        asked, args = json.loads(key)
        if asked == question and (question != "threads" or len(args) < 2 or args[1] is None):
            return answer
    raise AssertionError("%s was never asked" % question)


def _agreed(facts):
    """What every collector must say alike of one parked target."""
    target = _answer(facts, "target")
    threads = _answer(facts, "threads")
    python = _answer(facts, "python")
    locks = next((a for k, a in facts.answers.items() if json.loads(k)[0] == "locks"), [])
    python_locks = next((a for k, a in facts.answers.items() if json.loads(k)[0] == "python_locks"), [])
    return {
        "target": (target.kind, target.pid, os.path.realpath(target.executable or "")),
        "threads": sorted((t.tid, t.name) for t in threads),
        # (frame 0 as each names it: pc, library, function, from libc6-dbg's debug file or the library's own symbols)
        "innermost": sorted((t.tid, (t.frames[0].pc, t.frames[0].library, t.frames[0].function,
                                     t.frames[0].from_debug_file) if t.frames else None) for t in threads),
        "python": (python.status, python.version,
                   sorted((p.native_tid, tuple((f.function, f.file, f.line) for f in p.frames))
                          for p in python.threads)),
        "locks": sorted((tid, found.kind, found.address, tuple(found.owners)) for tid, found in locks),
        "python_locks": [(w.kind, w.object, w.locked) for w in python_locks],
    }


def test_gdb_the_command_line_pyhangs_own_stop_and_no_stop_collect_the_same_facts_of_one_deadlock_and_of_its_core(
        scenario):
    # GIVEN two threads deadlocked on two Python locks, parked
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py")])
    # WHEN gdb's collector, the command line's over gdb's pipe, the command line's own stop (its default) and
    # the no-stop one each read the process
    live = {"gdb": _gdb_facts(os.path.join(s.tmp, "gdb.json"), pid=s.pid),
            "cli": _cli_facts(os.path.join(s.tmp, "cli.json"), "report", "--json", "--once", "--gdb", "-p", s.pid),
            "own-stop": _cli_facts(os.path.join(s.tmp, "own.json"), "report", "--json", "--once", "-p", s.pid),
            "no-stop": _cli_facts(os.path.join(s.tmp, "nostop.json"), "report", "--json", "--once", "--no-stop",
                                  "-p", s.pid)}
    # AND gdb and the command line each read a core of it
    core = s.gcore()
    cores = {"gdb": _gdb_facts(os.path.join(s.tmp, "gdb-core.json"), executable=PY, core=core),
             "cli": _cli_facts(os.path.join(s.tmp, "cli-core.json"), "report", "--json", core, PY)}
    # THEN they give the same target, threads, Python stacks and lock waits
    for where, collected in (("live", live), ("core", cores)):
        agreed = {name: _agreed(facts) for name, facts in collected.items()}
        first = agreed["gdb"]
        assert first["target"][0] == ("live" if where == "live" else "core"), first["target"]
        assert first["target"][1] == s.pid and len(first["threads"]) == 3, first
        # (the threads the scenario recorded, and the two Locks it made, as what they wait on)
        assert sorted(tid for tid, _ in first["threads"]) == sorted(t["tid"] for t in s.truth["threads"]), first
        assert len(first["locks"]) >= 2 and \
            {w[1] for w in first["python_locks"]} >= {s.truth["a"], s.truth["b"]}, first
        for name, facts in agreed.items():
            assert facts == first, (where, name, facts, first)
    # AND what legitimately differs differs: only the no-stop collector says it did not stop the process
    kinds = {name: [w.kind for w in _answer(facts, "target").warnings] for name, facts in live.items()}
    assert "not-stopped" in kinds["no-stop"] and "not-stopped" not in kinds["gdb"] + kinds["cli"] + kinds["own-stop"], \
        kinds

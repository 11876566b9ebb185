"""Never a false all-clear: a Python process whose Python state pyhang could
not read, or a process whose glibc lock layouts it could not use while
threads sleep on futexes, gets an `incomplete` verdict (what could not be
read, what still holds), a "Report incomplete" headline instead of "No
deadlock found.", the verdict in its JSON and exit status 4; a program that
is not Python at all is never said to have an unreadable Python state.
Synthetic snapshots, no gdb."""
import copy
import json
import os

import pytest

import harness
from pyhang import analysis, cli
from pyhang.analysis import completeness
from pyhang.analysis import report as analysis_report
from pyhang.model.facts import SNAPSHOT_SCHEMA
from pyhang.model.glibc_kinds import LayoutsProblem
from pyhang.model.kinds import GilState, PythonEvidence, ReaderFailure, TargetWarning, Unread, VerdictKind
from pyhang.model.report import NativeFrame, TargetInfo
from pyhang.model.warning_facts import TargetIssue
from pyhang.model.snapshot import ProcessSnapshot, ThreadSnapshot
from pyhang.model.waits import LayoutsIssue, LockIdentification, from_data
from pyhang.model.tree import ProcessEntry, TreeReport
from pyhang.render import json as render_json
from pyhang.render.text import render_text
from pyhang.render.tree import render_tree_text, tree_json
from pyhang.model.python_facts import PythonState
from pyhang.model.record import replace
from pyhang.model.verdict_facts import LayoutsWait, StillRead

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SNAPSHOTS = os.path.join(ROOT, "testdata", "snapshots")

LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
LIBPYTHON = "/usr/lib/x86_64-linux-gnu/libpython3.14.so.1.0"
GLIBC_243 = "glibc 2.43 is outside the supported lock layouts (2.17 to 2.42)"
# what the native LockReader says of it (worded: the sentence above)
GLIBC_243_ISSUE = LayoutsIssue(LayoutsProblem.OUTSIDE, version="2.43", oldest="2.17", newest="2.42")
FUTEX, CLOCK_NANOSLEEP = 202, 230


def thread(num, tid, registers, library=LIBC, **facts):
    return ThreadSnapshot(num=num, tid=tid, name="t%d" % num, registers=registers,
                          frames=[NativeFrame(pc=0x7f0000001000 + num, function=None, library=LIBC),
                                  NativeFrame(pc=0x7f0000100000 + num, function=None, library=library)], **facts)


def futex_sleeper(num, tid, word, library=LIBC):
    return thread(num, tid, {"orig_rax": FUTEX, "rdi": word, "rsi": 0x189, "rdx": 0}, library)


def sleeper(num, tid):
    """A thread in clock_nanosleep: a system-call wait pyhang reads without Python or glibc layouts."""
    return thread(num, tid, {"orig_rax": CLOCK_NANOSLEEP, "rdi": 1, "rsi": 0, "rdx": 0x7ffd0000})


def python_314_abba(lock_problem=GLIBC_243_ISSUE):
    """The brief's process: python3.14 (no layout), glibc 2.43 (no lock layouts), the main thread
    asleep and two threads in an ABBA on a Lock and an RLock, asleep on futexes."""
    state = {"status": "unsupported", "version": "3.14.10", "library": LIBPYTHON, "threads": [], "gils": [],
             "warnings": ["no layout table for CPython 3.14.10"]}
    return ProcessSnapshot(
        target=TargetInfo(kind="live", pid=10798, executable="/usr/bin/python3.14"), python=from_data(PythonState, state),
        lock_problem=lock_problem,
        threads=[sleeper(1, 10798), futex_sleeper(2, 10799, 0x55d3ff1b8840, LIBPYTHON),
                 futex_sleeper(3, 10800, 0x55d3ff2e4e00, LIBPYTHON)])


def incomplete_verdicts(report):
    return [v for v in report.verdicts if v.kind == VerdictKind.INCOMPLETE]


def exit_status_of(snap, tmp_path, capsys, *options):
    """(exit status, stdout) of `pyhang report --snapshot FILE` whose snapshot assembles into `snap`: a
    snapshot saves a collector's answers, not what they assemble into, so the replay is given `snap`."""
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({"schema": SNAPSHOT_SCHEMA, "options": {}, "answers": []}))
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(analysis_report, "from_snapshot", lambda document: (snap, analysis.build_report(snap)))
        status = cli.main(["report", "--snapshot", str(path)] + list(options))
    return status, capsys.readouterr().out


# ---- the Python state ---------------------------------------------------------------------------

def test_a_python_pyhang_has_no_layout_for_is_an_incomplete_verdict_naming_the_version_and_what_still_holds():
    report = analysis.build_report(python_314_abba(lock_problem=None))
    (v,) = incomplete_verdicts(report)
    # THEN the verdict comes first, covers every thread, and says as data what was not read and why
    assert report.verdicts[0] is v and v.threads == [10798, 10799, 10800]
    assert v.facts.unread == Unread.PYTHON_STATE and v.facts.status == "unsupported"
    assert v.facts.version == "3.14.10"
    assert (v.facts.python_evidence, v.facts.python_evidence_path) == (PythonEvidence.RUNTIME, LIBPYTHON)
    # AND what still holds: every native stack, the main thread's system call, glibc's layouts
    assert v.facts.read == StillRead(native_stacks=[10798, 10799, 10800], syscall_waits=[10798], lock_waits=[],
                                     python_status="unsupported", lock_layouts=True, deadlocks=0)


def test_an_unsupported_python_on_an_unsupported_glibc_says_both_and_never_no_deadlock_found():
    # GIVEN the brief's python3.14 on glibc 2.43, two threads asleep on futexes nobody can name
    report = analysis.build_report(python_314_abba())
    py, locks = incomplete_verdicts(report)
    assert py.facts.unread == Unread.PYTHON_STATE and py.facts.read.lock_layouts is False
    assert locks.facts.unread == Unread.LOCK_LAYOUTS and locks.threads == [10799, 10800]
    assert locks.facts.problem == GLIBC_243_ISSUE
    assert locks.facts.waits == [LayoutsWait(tid=10799, futex=0x55d3ff1b8840), LayoutsWait(tid=10800, futex=0x55d3ff2e4e00)]
    # THEN the text answers first that the report is incomplete, and why
    lines = render_text(report).splitlines()
    assert "No deadlock found." not in lines and not any(l.startswith("No deadlock found") for l in lines)
    headline = lines[lines.index("3 threads") + 2]
    assert headline == ("Report incomplete: the Python state could not be read and glibc's lock layouts are not "
                        "known; no deadlock can be ruled out.")
    verdicts = [l for l in lines if l.startswith("Report incomplete: ")][1:]   # after the headline
    assert verdicts[0] == (
        "Report incomplete: the Python state of this Python process could not be read (pyhang has "
        "no layout for CPython 3.14.10 in libpython3.14.so.1.0), so no thread's Python stack, GIL state, threading "
        "lock or Thread.join is known and no deadlock through them can be ruled out; still read: the native stacks "
        "of 3 threads, the system-call wait of 1 thread")
    assert verdicts[1] == (
        "Report incomplete: glibc's lock layouts are not known (%s), so who holds what 2 threads "
        "wait on cannot be named and no deadlock through them can be ruled out: Thread 2 (LWP 10799) on futex "
        "0x55d3ff1b8840, Thread 3 (LWP 10800) on futex 0x55d3ff2e4e00; still read: the native stacks of 3 threads, "
        "the system-call wait of 1 thread" % GLIBC_243)


def test_the_incomplete_verdicts_are_in_the_json_as_the_contract_describes_them():
    doc = harness.validated_report(json.loads(render_json.dumps(analysis.build_report(python_314_abba()))))
    incomplete = [v for v in doc["verdicts"] if v["kind"] == "incomplete"]
    assert [v["facts"]["unread"] for v in incomplete] == ["python-state", "lock-layouts"]
    assert incomplete[0]["text"].startswith("the Python state")
    assert incomplete[1]["facts"]["waits"][0] == {"tid": 10799, "futex": 0x55d3ff1b8840}
    assert incomplete[1]["facts"]["problem"] == GLIBC_243   # the native kind and facts, worded
    assert doc["verdicts"][:2] == incomplete


def test_an_incomplete_verdict_without_what_was_not_read_breaks_the_schema():
    doc = json.loads(render_json.dumps(analysis.build_report(python_314_abba())))
    broken = copy.deepcopy(doc)
    del broken["verdicts"][0]["facts"]["unread"]
    assert any("unread" in e for e in harness.report_errors(broken))
    broken = copy.deepcopy(doc)
    del broken["verdicts"][1]["facts"]["waits"]
    assert any("waits" in e for e in harness.report_errors(broken))


def test_a_runtime_state_that_cannot_be_read_is_incomplete_and_still_lists_the_waits_read():
    # GIVEN a runtime found (3.12.1) whose state is not in memory (a core missing its pages), glibc's
    # layouts known: one thread's semaphore wait was decoded
    state = {"status": "unreadable", "version": "3.12.1", "library": "/opt/py/lib/libpython3.12.so.1.0",
             "threads": [], "gils": [], "warnings": ["interpreter runtime state at 0x7f00 unreadable"]}
    snap = ProcessSnapshot(target=TargetInfo(kind="core", pid=5, core="/tmp/core.5"), python=from_data(PythonState, state), threads=[
        sleeper(1, 5),
        thread(2, 6, {"orig_rax": FUTEX, "rdi": 0x2000},
               lock=from_data(LockIdentification,
                              {"kind": "semaphore", "address": 0x2000, "owners": [], "lock": {"value": 0}}))])
    report = analysis.build_report(snap)
    (v,) = incomplete_verdicts(report)
    assert v.facts.status == "unreadable" and v.facts.read.lock_waits == [6]
    text = render_text(report)
    assert ("could not be read (the runtime state of CPython 3.12.1 in libpython3.12.so.1.0 could not be read from "
            "the target's memory)") in text
    assert "the lock or object wait of 1 thread, glibc's lock layouts" in text
    # AND the semaphore's unknown owner is still its own verdict, after the incomplete one
    assert [x.kind for x in report.verdicts] == [VerdictKind.INCOMPLETE, VerdictKind.OWNERS_UNKNOWN]
    assert text.splitlines()[text.splitlines().index("2 threads") + 2].startswith("Report incomplete: ")


def test_a_runtime_not_found_while_a_thread_runs_libpython_is_a_python_state_not_read():
    # GIVEN a core whose libpython has moved: no runtime found, yet the stacks run in libpython
    snap = ProcessSnapshot(target=TargetInfo(kind="core", pid=5, core="/tmp/core.5", executable="/srv/app/bin/app"),
                           python=from_data(PythonState, {"status": "not-python", "threads": [], "gils": [], "warnings": []}),
                           threads=[futex_sleeper(1, 5, 0x3000, "/opt/py/lib/libpython3.12.so.1.0")])
    report = analysis.build_report(snap)
    (v,) = incomplete_verdicts(report)
    assert (v.facts.python_evidence, v.facts.python_evidence_path) == (
        PythonEvidence.LIBRARY, "/opt/py/lib/libpython3.12.so.1.0")
    assert "no CPython runtime was found, yet a thread runs code in libpython3.12.so.1.0" in render_text(report)
    # AND its threads are not said to run no Python: what they do with the GIL is unknown
    assert [t.gil for t in report.threads] == [GilState.UNKNOWN]


def test_a_runtime_not_found_in_a_program_named_python_is_a_python_state_not_read():
    snap = ProcessSnapshot(target=TargetInfo(kind="core", pid=5, executable="/tmp/mv/bin/python3.12"),
                           python=from_data(PythonState, {"status": "not-python", "threads": [], "gils": [], "warnings": []}),
                           threads=[sleeper(1, 5)])
    (v,) = incomplete_verdicts(analysis.build_report(snap))
    assert v.facts.python_evidence == PythonEvidence.EXECUTABLE


@pytest.mark.parametrize("kind", ["core", "live"])
def test_no_runtime_found_in_an_executable_that_could_not_be_read_says_so_and_for_a_core_what_to_give(kind):
    # GIVEN a process whose executable could not be read here (a core's, moved or deleted since)
    problem = TargetIssue(TargetWarning.SYMBOLS_UNREADABLE, path="/srv/app/bin/app", text=ReaderFailure.CANNOT_OPEN,
                          number=2)
    snap = ProcessSnapshot(target=TargetInfo(kind=kind, pid=5, core="/cores/core.5" if kind == "core" else None,
                                             executable="/srv/app/bin/app", executable_problem=problem),
                           python=from_data(PythonState, {"status": "not-python", "threads": [], "gils": [], "warnings": []}),
                           threads=[sleeper(1, 5)])
    report = analysis.build_report(snap)
    first = render_text(report).splitlines()[0]
    # THEN "no Python runtime found" says the runtime could not be looked for in it
    assert "no Python runtime found (its executable could not be read here, so a runtime linked into it could " \
           "not be looked for" in first, first
    # AND, for a core, that giving the interpreter reads it
    assert ("give the interpreter: pyhang report /cores/core.5 /path/to/python3.X" in first) == (kind == "core"), first
    # AND the JSON says why, in the target
    assert render_json.to_json(report)["target"]["executable_problem"] == \
        "cannot open /srv/app/bin/app: No such file or directory"
    # AND an executable that was read adds nothing
    snap.target.executable_problem = None
    assert render_text(analysis.build_report(snap)).splitlines()[0].endswith("no Python runtime found")


# ---- what is not Python, and what is complete ---------------------------------------------------

def test_a_c_program_is_never_said_to_have_an_unreadable_python_state(tmp_path, capsys):
    # GIVEN a C program pyhang reads whole (no Python runtime, no libpython, not named python)
    snap = ProcessSnapshot(target=TargetInfo(kind="live", pid=7, executable="/usr/bin/prog_parked"),
                           python=from_data(PythonState, {"status": "not-python", "threads": [], "gils": [], "warnings": []}),
                           threads=[sleeper(1, 7), sleeper(2, 8)])
    report = analysis.build_report(snap)
    assert not incomplete_verdicts(report) and {t.gil for t in report.threads} == {GilState.NO_PYTHON}
    text = render_text(report)
    assert "No deadlock found; this process runs no Python: only its native threads and glibc locks were " \
        "read." in text.splitlines() and "Python state" not in text
    assert "no Python runtime found" in text.splitlines()[0]
    # AND its exit status says that pyhang's question does not apply (2), never that all is well
    assert exit_status_of(snap, tmp_path, capsys)[0] == cli.ExitStatus.NO_PYTHON


def test_the_recorded_c_deadlock_stays_a_deadlock_with_no_python_verdict():
    with open(os.path.join(SNAPSHOTS, "native_abba.json")) as f:
        report = analysis.build_report(analysis.from_snapshot(json.load(f)["snapshot"])[0])
    assert report.deadlocks and not incomplete_verdicts(report)


def test_a_python_process_read_whole_is_no_deadlock_found_and_exit_status_0(tmp_path, capsys):
    state = {"status": "ok", "version": "3.11.2", "gils": [], "warnings": [], "library": "/usr/bin/python3.11",
             "threads": [{"tstate": 1, "native_tid": 7, "interp_id": 0, "frames": [], "holds_gil": False}]}
    snap = ProcessSnapshot(target=TargetInfo(kind="live", pid=7, executable="/usr/bin/python3.11"), python=from_data(PythonState, state),
                           threads=[sleeper(1, 7)])
    assert not incomplete_verdicts(analysis.build_report(snap))
    status, out = exit_status_of(snap, tmp_path, capsys)
    assert status == cli.OK and "No deadlock found." in out.splitlines()


# ---- glibc's lock layouts -----------------------------------------------------------------------

def test_unknown_lock_layouts_with_no_thread_asleep_on_a_futex_are_a_warning_only():
    snap = python_314_abba()
    snap.python = PythonState(status="not-python")
    snap.target.executable = "/usr/bin/prog"
    snap.threads = [sleeper(1, 10798)]
    report = analysis.build_report(snap)
    assert not incomplete_verdicts(report)
    text = render_text(report)
    assert "warning: locks: " + GLIBC_243 in text and any(l.startswith("No deadlock found") for l in text.splitlines())


def test_unknown_lock_layouts_leave_a_c_programs_futex_sleepers_in_an_incomplete_verdict(tmp_path, capsys):
    # GIVEN a C program on glibc 2.43 with a thread asleep on a mutex's futex
    snap = ProcessSnapshot(target=TargetInfo(kind="live", pid=7, executable="/usr/bin/prog_abba"),
                           python=from_data(PythonState, {"status": "not-python", "threads": [], "gils": [], "warnings": []}),
                           lock_problem=GLIBC_243_ISSUE, threads=[sleeper(1, 7), futex_sleeper(2, 8, 0x4000)])
    report = analysis.build_report(snap)
    (v,) = incomplete_verdicts(report)
    assert v.facts.unread == Unread.LOCK_LAYOUTS and v.threads == [8]
    assert v.facts.read.python_status == "not-python"
    text = render_text(report)
    assert ("Report incomplete: glibc's lock layouts are not known; no deadlock can be ruled out."
            in text.splitlines())
    assert "Python state" not in text
    status, out = exit_status_of(snap, tmp_path, capsys)
    assert status == cli.INCOMPLETE == 4 and out == text + "\n"


def test_a_deadlock_found_despite_unknown_lock_layouts_exits_3_and_still_names_what_was_not_read(tmp_path, capsys):
    # GIVEN the recorded RLock ABBA (the RLocks name their owners without glibc), read on a glibc
    # whose layouts are not known, with one more thread asleep on a futex nothing identified
    with open(os.path.join(SNAPSHOTS, "rlock_abba.json")) as f:
        snap = analysis.from_snapshot(json.load(f)["snapshot"])[0]
    snap.lock_problem = GLIBC_243_ISSUE
    for t in snap.threads:
        t.lock = None
    snap.threads.append(futex_sleeper(99, 4242, 0x5000))
    report = analysis.build_report(snap)
    # THEN the deadlock is the answer, and the verdict still says what could not be read
    assert len(report.deadlocks) == 1
    (v,) = incomplete_verdicts(report)
    assert v.threads == [4242] and v.facts.read.deadlocks == 1
    text = render_text(report)
    assert text.splitlines()[text.splitlines().index("%d threads" % len(snap.threads)) + 2].startswith(
        "Found one deadlock")
    assert "still read: " in text and "the 1 deadlock above" in text
    assert exit_status_of(snap, tmp_path, capsys)[0] == cli.DEADLOCK


# ---- exit statuses ------------------------------------------------------------------------------

def test_report_of_a_python_state_not_read_exits_4_in_text_and_json(tmp_path, capsys):
    snap = python_314_abba()
    status, out = exit_status_of(snap, tmp_path, capsys)
    assert status == cli.INCOMPLETE and "Report incomplete: " in out
    status, out = exit_status_of(snap, tmp_path, capsys, "--json")
    assert status == cli.INCOMPLETE
    assert "incomplete" in [v["kind"] for v in harness.validated_report(json.loads(out))["verdicts"]]


def test_a_deadlock_is_status_3_before_an_incomplete_report_is_status_4():
    assert completeness.exit_status(1, [], [Unread.PYTHON_STATE]) == cli.DEADLOCK
    assert completeness.exit_status(0, [], [Unread.LOCK_LAYOUTS]) == cli.INCOMPLETE
    assert completeness.exit_status(0, [], []) == cli.OK


def test_the_help_documents_exit_status_4():
    epilog = cli.parser().epilog
    assert "\n  4  `report` was made and found no deadlock, but is incomplete" in epilog


# ---- process trees ------------------------------------------------------------------------------

def test_a_tree_with_a_process_not_read_whole_says_incomplete_for_that_process():
    snap = python_314_abba()
    snap.target.parent_pid = 1
    incomplete = analysis.build_report(snap)
    fine = analysis.build_report(ProcessSnapshot(
        target=TargetInfo(kind="live", pid=20000, parent_pid=10798, executable="/usr/bin/prog"),
        python=from_data(PythonState, {"status": "not-python", "threads": [], "gils": [], "warnings": []}), threads=[sleeper(1, 20000)]))
    tree = TreeReport(root_pid=10798, processes=[ProcessEntry(pid=10798, parent_pid=1, report=incomplete),
                                                 ProcessEntry(pid=20000, parent_pid=10798, report=fine)])
    text = render_tree_text(tree)
    lines = text.splitlines()
    assert "No deadlock found across processes." not in lines
    assert lines[2] == ("Report incomplete: in PID 10798 the Python state could not be read and glibc's lock "
                        "layouts are not known; no deadlock across processes can be ruled out.")
    assert any(l.startswith("  PID 10798: 3 threads, Python 3.14.10, report incomplete (the Python state")
               for l in lines), lines
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    assert [v["facts"]["unread"] for v in doc["processes"][0]["verdicts"] if v["kind"] == "incomplete"] == [
        "python-state", "lock-layouts"]
    assert not [v for v in doc["processes"][1]["verdicts"] if v["kind"] == "incomplete"]


@pytest.mark.parametrize("status", ["starting", "finalizing"])
def test_an_interpreter_starting_or_finalizing_was_read_and_is_not_incomplete(status):
    snap = python_314_abba(lock_problem=None)
    snap.python = replace(snap.python, status=status, version="3.11.2")
    assert not incomplete_verdicts(analysis.build_report(snap))


def test_a_free_threaded_build_is_named_as_such_never_as_a_version_without_a_layout():
    # GIVEN a free-threaded 3.14t, which the target's own _Py_DebugOffsets say it is
    snap = python_314_abba(lock_problem=None)
    snap.python = replace(snap.python, free_threaded=True, library=LIBPYTHON.replace("3.14", "3.14t"))
    report = analysis.build_report(snap)
    (v,) = incomplete_verdicts(report)
    # THEN the verdict says, as data and in its sentence, that it is a free-threaded build
    assert v.facts.free_threaded is True
    text = render_text(report)
    assert "is a free-threaded build (Py_GIL_DISABLED)" in text and "has no layout" not in text, text
    doc = harness.validated_report(json.loads(render_json.dumps(report)))
    assert doc["verdicts"][0]["facts"]["free_threaded"] is True

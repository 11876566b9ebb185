"""Never a false all-clear: the `incomplete` verdicts of a process whose
report cannot rule a deadlock out, because pyhang could not read what it
needs (model.kinds.Unread):

- the Python state of a process that is Python: a CPython pyhang has no
  layout for, a runtime state it cannot read, or a runtime it cannot find
  although the process runs one (a libpython on a thread's stack, an
  executable named like CPython's).  No Python stack, GIL state, threading
  lock or Thread.join is then known, and a deadlock through them stays
  unseen.  A process that is not Python at all (no runtime found and no
  sign of one) needs no Python state: it gets no such verdict.
- glibc's lock layouts, when some thread sleeps in futex(2) on something
  no other decoder identified: the owner of what it waits on cannot be
  named, so a cycle through it cannot be seen.

Each verdict also says what still holds (`read`): the native stacks, the
waits that were identified, and whether the other of the two was read.
"""
import os
import re

from pyhang.analysis import syscalls
from pyhang.model.kinds import HANG_VERDICTS, ExitStatus, PythonEvidence, PythonStatus, ThreadState, Unread, VerdictKind, \
    WaitKind
from pyhang.model.python_facts import PythonState
from pyhang.model.report import Verdict
from pyhang.model.verdict_facts import IncompleteFacts, LayoutsWait, StillRead

# Statuses of a Python runtime that was found and could not be read.
_UNREAD = (PythonStatus.UNSUPPORTED, PythonStatus.UNREADABLE)
_LIBPYTHON = re.compile(r"^libpython\d+\.\d+")           # libpython3.12.so.1.0, libpython3.6m.so.1.0
_PYTHON_EXECUTABLE = re.compile(r"^python(\d+(\.\d+)?)?[dmu]*$")   # python, python3, python3.11, python3.6m


def _name(path):
    return os.path.basename(path) if path else ""


def python_evidence(state, executable, libraries):
    """(PythonEvidence, path) when the process is Python and its state was
    not read, else None.  `state` is the decoded interpreter (a snapshot's
    `python`: a status the decoder did not give, no state collected, is no
    evidence of anything), `executable` the target's, `libraries` the
    objects of the threads' native frames."""
    status = state.status if state is not None else None
    if status in _UNREAD:
        return PythonEvidence.RUNTIME, state.library or None
    if status != PythonStatus.NOT_PYTHON:
        return None
    libraries = list(dict.fromkeys(lib for lib in libraries if lib))
    found = next((lib for lib in libraries if _LIBPYTHON.match(_name(lib))), None)
    if found:
        return PythonEvidence.LIBRARY, found
    if executable and _PYTHON_EXECUTABLE.match(_name(executable)):
        return PythonEvidence.EXECUTABLE, executable
    found = next((lib for lib in libraries if _PYTHON_EXECUTABLE.match(_name(lib))), None)
    return (PythonEvidence.EXECUTABLE, found) if found else None


def frame_libraries(threads):
    """The objects of every native frame of `threads` (ThreadSnapshots or ThreadReports)."""
    for t in threads:
        for f in getattr(t, "native_frames", None) or getattr(t, "frames", None) or ():
            yield f.library


def unnamed_futex_waits(report, snapshot):
    """[LayoutsWait]: the threads asleep in futex(2) on a word no decoder
    identified (no BlockedOn), when glibc's lock layouts are not known."""
    if not report.lock_problem:
        return []
    registers = {t.tid: t.registers for t in snapshot.threads}
    out = []
    for th in report.threads:
        futex = syscalls.futex_address(registers.get(th.tid) or {})
        if futex is not None and th.blocked_on is None:
            out.append(LayoutsWait(tid=th.tid, futex=futex))
    return out


def still_read(report):
    """What holds even so (a StillRead)."""
    waits = [t for t in report.threads if t.blocked_on is not None]
    return StillRead(native_stacks=[t.tid for t in report.threads if t.native_frames],
                     syscall_waits=[t.tid for t in waits if t.blocked_on.kind == WaitKind.SYSCALL],
                     lock_waits=[t.tid for t in waits if t.blocked_on.kind != WaitKind.SYSCALL],
                     python_status=report.python_status,
                     lock_layouts=not report.lock_problem,
                     deadlocks=len(report.deadlocks))


def verdicts(report, snapshot):
    """The `incomplete` verdicts of a report whose threads, edges and
    deadlocks are made: the Python state first, then the lock layouts."""
    out = []
    state = snapshot.python or PythonState()
    evidence = python_evidence(state, report.target.executable, frame_libraries(report.threads))
    if evidence is not None:
        out.append(Verdict(kind=VerdictKind.INCOMPLETE, threads=[t.tid for t in report.threads],
                           facts=IncompleteFacts(unread=Unread.PYTHON_STATE, status=state.status,
                                                 version=state.version or None,
                                                 free_threaded=bool(state.free_threaded),
                                                 python_evidence=evidence[0], python_evidence_path=evidence[1],
                                                 read=still_read(report))))
    waits = unnamed_futex_waits(report, snapshot)
    if waits:
        out.append(Verdict(kind=VerdictKind.INCOMPLETE, threads=[w.tid for w in waits],
                           facts=IncompleteFacts(unread=Unread.LOCK_LAYOUTS, problem=report.lock_problem, waits=waits,
                                                 read=still_read(report))))
    return out


def hung(report):
    """The verdict kinds (and orphaned-lock hazards) that say the process
    hangs without a cycle."""
    found = [v.kind for v in report.verdicts if v.kind in HANG_VERDICTS]
    found += [h.kind for h in report.fork_hazards if h.hangs]
    return found


def exit_status(deadlocks, hangs, unread, python=True):
    """One number for what a report (or a tree) concluded: a deadlock found
    is the answer even where something could not be read; a hang without a
    cycle next; else an incomplete report is never an all-clear; else a
    target that runs no Python (`python` False) is not given one either."""
    if deadlocks:
        return ExitStatus.DEADLOCK
    if hangs:
        return ExitStatus.HUNG
    if unread:
        return ExitStatus.INCOMPLETE
    return ExitStatus.OK if python else ExitStatus.NO_PYTHON


def runs_python(report):
    """Whether the process runs Python, as far as pyhang can tell: its
    interpreter was found (read or not), or it shows signs of one."""
    return report.python_status != PythonStatus.NOT_PYTHON or bool(incomplete(report))


def report_status(report):
    """The exit status of one process's report.  A thread waiting on a pipe
    or socket only other processes hold (waits-on-process) leaves it
    incomplete: whether that ends, the other processes say (--tree); so does
    any thread the closed-world account (analysis.account) finds waiting
    elsewhere or on what pyhang cannot name or does not model."""
    across = [v.kind for v in report.verdicts if v.kind == VerdictKind.WAITS_ON_PROCESS]
    python = runs_python(report)
    # (a process that runs no Python gets no all-clear either way: its own answer, 2, says so)
    unaccounted = [s for s in account_problems(report) if s in (ThreadState.ELSEWHERE, ThreadState.UNACCOUNTED)] \
        if python else []
    return exit_status(report.deadlocks, hung(report), incomplete(report) + across + unaccounted, python)


def account_problems(report):
    """The problem classes (ThreadState.PROBLEMS) of `report`'s threads, each once."""
    return list(dict.fromkeys(t.account.state for t in report.threads
                              if t.account is not None and t.account.state in ThreadState.PROBLEMS))


def incomplete(report):
    """What could not be read ([Unread]) of a report's process, in verdict order."""
    return [v.facts.unread for v in report.verdicts if v.kind == VerdictKind.INCOMPLETE]

"""The per-thread and per-process commands (`py-bt`, `py-bt-full`,
`py-locals`, `lock-owner`, `gil-holder`, `fork-hazards`, `py-tasks`) from one
report (`Analysed`): the command line's of a report made in its process
(the facts collected once, by a gdb answering through a pipe or without
stopping the target; nothing is read back from gdb's stdout), and gdb's
`py-bt`, `lock-owner`, `gil-holder`, `fork-hazards` and `py-tasks` of the
same analysis made once per stop (pyhang_gdb.facts.analysed), a thread at a
time: gdb and the command line say the same of the same target."""
from pyhang.analysis import syscalls
from pyhang.analysis.gil import gils
from pyhang.analysis.python_state import PythonView
from pyhang.model.kinds import LocalKind, PythonStatus
from pyhang.render import values
from pyhang.render.asyncio import render_py_tasks
from pyhang.render.forks import render_fork_hazards
from pyhang.render.gil import render_gils
from pyhang.render.names import c_call_line, lock_text, python_frame_line, thread_label
from pyhang.render.text import names_of, py_bt_header, python_status_line, render_thread_command, \
    thread_command_text, warnings

# Commands whose frames need their locals collected.
WITH_LOCALS = ("py-bt-full", "py-locals")
COMMANDS = ("py-bt", "lock-owner", "gil-holder", "fork-hazards", "py-tasks") + WITH_LOCALS


def _per_thread(report, thread_states, each):
    """The report's warnings, then `each(thread, its thread state)` of every
    thread with a Python thread state (a line saying it has none otherwise)."""
    out = ["warning: " + w for w in warnings(report)]
    for th in report.threads:
        out.append("")
        if thread_states.get(th.tid) is None:
            out.append("%s has no Python thread state: it runs no Python code" % thread_label(th.gdb_num, th.tid))
            continue
        out.extend(each(th))
    return out


def _bt_full(report):
    def each(th):
        out = [py_bt_header(th.gdb_num, th.tid, report.target.python_version, th.gil, th.interpreter)]
        if not th.python_frames:
            out.append("  (no Python frame: the thread is between Python calls or has not started)")
        # what each frame calls in C a line of its own above it (as in py-bt)
        out.extend(values.bt_full_lines([(f, [v for v in f.locals or () if v.kind == LocalKind.ARGUMENT],
                                          c_call_line(f.c_call) if f.c_call is not None else None, f.source)
                                         for f in th.python_frames], th.python_frames_omitted))
        return out
    return each


def _locals(report):
    def each(th):
        if not th.python_frames:
            return ["%s: no Python frame" % thread_label(th.gdb_num, th.tid)]
        f = th.python_frames[0]
        return ["%s, innermost Python frame: %s" % (thread_label(th.gdb_num, th.tid), python_frame_line(f))] + \
            values.locals_lines(f.locals or [], f.locals_problem)
    return each


# The commands of one thread (gdb's of the selected thread) and of the whole process.
THREAD_COMMANDS = ("py-bt", "lock-owner")
PROCESS_COMMANDS = ("gil-holder", "fork-hazards", "py-tasks")


class Analysed:
    """The (ProcessSnapshot, Report) of one analysis (analysis.report.analyse)
    and what its commands read besides, made once: gdb words it a thread at a
    time (`thread apply all lock-owner`), from one analysis per stop."""

    def __init__(self, snapshot, report):
        self.snapshot, self.report = snapshot, report
        self.view = PythonView(snapshot.python)
        self.names = names_of(report)
        self._threads = {th.tid: th for th in report.threads}
        self._registers = {t.tid: t.registers for t in snapshot.threads}

    def state(self, tid):
        """The decoded Python thread state of `tid`, or None."""
        return self.view.thread(tid)

    def call(self, tid):
        """The name of the system call `tid` sleeps in, or None."""
        nr = syscalls.in_syscall(self._registers.get(tid) or {})
        return syscalls.name(nr) if nr is not None else None

    def thread_text(self, command, tid, named=True):
        """`command` (one of THREAD_COMMANDS) of the one thread `tid`, as the
        command line says it of that thread (`named` False: not naming it,
        under gdb's `thread apply`), or None when the report has no such
        thread.  py-bt of a process whose interpreter cannot be read says why."""
        th = self._threads.get(tid)
        if th is None:
            return None
        if command == "py-bt" and not self.view.ok and self.view.status != PythonStatus.FINALIZING:
            return python_status_line(self.view.status)
        return thread_command_text(command, self.report, th, self.state(tid), self.call(tid), self.names, named)

    def render(self, command):
        """The text of `command` (one of COMMANDS) for every thread of the target."""
        report, view = self.report, self.view
        if command in THREAD_COMMANDS:
            states = {t.tid: self.state(t.tid) for t in self.snapshot.threads}
            calls = {t.tid: self.call(t.tid) for t in self.snapshot.threads}
            return render_thread_command(command, report, states, calls)
        if command == "fork-hazards":
            return render_fork_hazards(report, report.fork_analysis)
        if not view.ok:
            return python_status_line(view.status)
        if command == "gil-holder":
            entries, no_python = gils(view, self.snapshot.threads)
            return render_gils(entries, no_python, self.snapshot.threads, view.warnings)
        if command == "py-tasks":
            return render_py_tasks(report, self.names, lock_text)
        states = {t.tid: self.state(t.tid) for t in self.snapshot.threads}
        each = _bt_full(report) if command == "py-bt-full" else _locals(report)
        return "\n".join(_per_thread(report, states, each))


def render(command, snapshot, report):
    """The text of `command` (one of COMMANDS) for the target of `report`."""
    return Analysed(snapshot, report).render(command)

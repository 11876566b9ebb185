"""The per-thread and per-process commands of the command line (`py-bt`,
`py-bt-full`, `py-locals`, `lock-owner`, `gil-holder`, `fork-hazards`,
`py-tasks`) from a report made in this process: the facts were collected
once (by a gdb answering through a pipe, or without stopping the target),
analysed here, and worded by the same renderers the gdb commands use.
Nothing is read back from gdb's stdout."""
from pyhang.analysis import syscalls
from pyhang.analysis.gil import gils
from pyhang.analysis.python_state import PythonView
from pyhang.model.kinds import LocalKind
from pyhang.render import values
from pyhang.render.asyncio import render_py_tasks
from pyhang.render.forks import render_fork_hazards
from pyhang.render.gil import render_gils
from pyhang.render.names import c_call_line, lock_text, python_frame_line, thread_label
from pyhang.render.text import names_of, py_bt_header, python_status_line, render_thread_command, warnings

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
        for i, f in enumerate(th.python_frames):
            arguments = [v for v in f.locals or () if v.kind == LocalKind.ARGUMENT]
            if f.c_call is not None:   # what the frame calls in C, a line of its own above it (as in py-bt)
                out.append(values.C_CALL_INDENT + c_call_line(f.c_call))
            out.append(values.frame_header(i, f, arguments))
            if f.source:
                out.append("    " + f.source.strip())
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


def render(command, snapshot, report):
    """The text of `command` (one of COMMANDS) for the target of `report`."""
    view = PythonView(snapshot.python)
    states = {t.tid: view.thread(t.tid) for t in snapshot.threads}
    if command in ("py-bt", "lock-owner"):
        calls = {}
        for t in snapshot.threads:
            nr = syscalls.in_syscall(t.registers)
            calls[t.tid] = syscalls.name(nr) if nr is not None else None
        return render_thread_command(command, report, states, calls)
    if command == "fork-hazards":
        return render_fork_hazards(report, report.fork_analysis)
    if not view.ok:
        return python_status_line(view.status)
    if command == "gil-holder":
        entries, no_python = gils(view, snapshot.threads)
        return render_gils(entries, no_python, snapshot.threads, view.warnings)
    if command == "py-tasks":
        return render_py_tasks(report, names_of(report), lock_text)
    each = _bt_full(report) if command == "py-bt-full" else _locals(report)
    return "\n".join(_per_thread(report, states, each))

"""The text report, for people at a gdb prompt."""
from pyhang.libraries import basename
from pyhang.model.kinds import DeadlockKind, OwnerSource, PythonStatus, VerdictKind, WaitKind
from pyhang.model.edge_facts import BarrierPartyFacts, DatabaseFacts, DriverLockFacts, LockSelfFacts, \
    LoopSelfFacts, PoolCheckoutFacts, ReachesObjectFacts, ReachesQueueFacts, connections_of, references_of
from pyhang.model.report import FramesOmitted, PythonFrame, Report, ThreadReport, Verdict, entry_frame
from pyhang.model.record import from_data
from pyhang.model.waits import CodeLine, syscall_of
from pyhang.render import recursion
from pyhang.render.asyncio import await_deadlock_lines, render_asyncio
from pyhang.render.exits import exiting_text, signal_text
from pyhang.render.forks import evidence, hazard_advice
from pyhang.render.gc import report_gc_line, thread_gc_line
from pyhang.render.gcore import report_lines as proc_record_lines
from pyhang.render.target import files_missing, folded, warning_text
from pyhang.render.glibc import layouts_text
from pyhang.render.locks import database_evidence, database_held_text, describe, evidence as wait_evidence, \
    evidence_words, likely_holder_evidence, not_blocked, pool_connections_text, pool_held_text, summary, unreadable
from pyhang.render.names import (ThreadNames, c_call_line, thread_problem, frame_source_lines, lock_reference, lock_text, object_name,
                                 python_frame_line, thread_label, thread_title)
from pyhang.render.account import account_line, children_line, second_look_line, seconds_text
from pyhang.render.verdicts import IN_TREE_WAITS, TITLES, WAITS_PREFIX, deadlock_advice, findings, headline, \
    verdict_advice, verdict_text
from pyhang.render.values import frame_locals_text, omitted_line
from pyhang.render.unread import unread_text


def _lib(path):
    return basename(path) or "??"


def native_frame_line(i, f):
    name = f.function + ("+%d" % f.offset if f.offset else "") if f.function else "??"
    return "#%-2d 0x%016x in %s (%s)" % (i, f.pc, name, _lib(f.library))


def thread_header(th: ThreadReport, interpreters=False):
    """`interpreters`: the process runs Python in more than one interpreter:
    the thread's is named too."""
    title = thread_title(th.gdb_num, th.tid, th.name, th.python_name)
    if interpreters and th.interpreter is not None:
        title += " (interpreter %d)" % th.interpreter
    return title


def several_interpreters(threads):
    """Whether the threads (ThreadReports) run Python in more than one interpreter."""
    return len({th.interpreter for th in threads if th.interpreter is not None}) > 1


def edge_evidence(e, waiter_blocked=None):
    """Why `e.owner` is thought to hold what `e.waiter` waits for: the
    decoder's own words, else the sentence of the heuristic's facts.
    `waiter_blocked`: the waiter's BlockedOn.  An edge of the waiter's own
    wait carries that wait's evidence (analysis.deadlocks), which is empty
    where the analysis identified the wait itself: worded here as for the
    wait (render.locks.evidence)."""
    facts = e.facts
    if e.evidence:
        return evidence_words(e.evidence)
    if e.kind == WaitKind.PY_LOCK:
        return lock_reference(from_data(CodeLine, references_of(facts)))   # (an edge's facts keep it as data)
    if e.kind == WaitKind.PY_QUEUE_JOIN and isinstance(facts, ReachesQueueFacts):
        return "reaches the queue from its Python frames and does not wait in its get(): it may hold an item " \
               "whose task_done() the join waits for"
    if e.kind == WaitKind.SQLITE_BUSY:
        return "; ".join("holds a sqlite3.Connection (`%s` in %s, %s:%s): its open transaction may hold the "
                         "database lock" % (c.name, c.frame.function, c.frame.file, c.frame.line)
                         for c in connections_of(facts) or ())
    if isinstance(facts, DriverLockFacts):
        return likely_holder_evidence(facts)
    if isinstance(facts, DatabaseFacts):
        return database_evidence(facts)
    if isinstance(facts, PoolCheckoutFacts):
        return "holds %s: the pool fills again only when it returns it" % pool_connections_text(facts)
    if isinstance(facts, BarrierPartyFacts):
        return ("reaches the Barrier from its Python frames and does not wait at it: a party that has not arrived "
                "(%s of %s parties wait)" % (facts.waiting, facts.parties))
    if isinstance(facts, ReachesObjectFacts):
        return "reaches the object from its Python frames and does not wait on it: it may be the one to set it"
    b = waiter_blocked
    if b is not None and b.evidence is None and (b.kind, b.address) == (e.kind, e.address) and e.owner in b.owners:
        return wait_evidence(b) or ""
    return ""


def python_status_line(status):
    """One plain line when there is no usable Python state, else None."""
    if status == PythonStatus.OK:
        return None
    if status == PythonStatus.NOT_PYTHON:
        return "this process runs no CPython interpreter pyhang can find"
    if status == PythonStatus.STARTING:
        return "the Python interpreter is still starting: no thread state yet"
    if status == PythonStatus.FINALIZING:
        return "the Python interpreter is finalizing (shutting down)"
    return "the Python state could not be read (%s)" % status


def warnings(report: Report, fold=False):
    """Every warning of the report, in words, in the order they arose; `fold`: for a person, one line of
    advice for a core whose files are not here in place of one per file (render.target.folded)."""
    out = [warning_text(w) for w in (folded(report.warnings) if fold else report.warnings)]
    if fold and files_missing(report.warnings):
        return out + [line for line in warnings(report)[len(report.warnings):] if not line.startswith("locks: ")]
    line = python_status_line(report.python_status)
    if line and report.python_status != PythonStatus.NOT_PYTHON:
        out.append(line)
    if report.lock_caveat:
        out.append("locks: " + layouts_text(report.lock_caveat))
    if report.lock_problem:
        out.append("locks: " + layouts_text(report.lock_problem))
    if report.cycles_truncated:
        out.append("more deadlock cycles than pyhang lists; the first %d are shown" % len(report.deadlocks))
    if report.unanswered:
        out.append("the snapshot holds no answer to %d of the questions its analysis asks (it was made by another "
                   "version of pyhang): what they would have said is not known" % report.unanswered)
    return out


def names_of(report: Report):
    return ThreadNames(report.threads)


def describe_target(report: Report):
    t = report.target
    if t.kind == "core":
        where = "core file %s (pid %s)" % (t.core, t.pid)
    elif t.kind == "live":
        where = "live process %s" % t.pid
    else:
        where = "%s target" % t.kind
    if t.namespace_pid is not None:
        where += " (pid %d in its own PID namespace; TIDs below are the namespace's)" % t.namespace_pid
    parts = [where]
    if t.executable:
        parts.append(t.executable)
    if t.python_version:
        parts.append("Python %s" % t.python_version)
    elif report.python_status in (PythonStatus.UNSUPPORTED, PythonStatus.UNREADABLE):
        parts.append("a Python runtime of unknown version")   # found, and its version not read
    else:
        parts.append("no Python runtime found" + _unread_executable(t, report.warnings))
    return ", ".join(parts)


def _unread_executable(t, report_warnings=()):
    """Why "no Python runtime found" may be wrong: the executable, where a
    runtime linked into it is found, could not be read here; for a core,
    what to give."""
    if not t.executable_problem:
        return ""
    if t.kind == "core" and files_missing(report_warnings):
        return " (its executable is not here: the core's files are not, see --sysroot below)"
    if t.kind == "core":
        return (" (its executable could not be read here, so a runtime linked into it could not be looked for: if "
                "it ran Python, give the interpreter: pyhang report %s /path/to/python3.X, in gdb: gdb "
                "/path/to/python3.X %s)" % (t.core, t.core))
    return " (its executable could not be read here, so a runtime linked into it could not be looked for)"


def unpaired_line(python_frames, loops):
    """gdb's `bt` of a thread whose Python frames cannot be put under the evaluation-loop frames that run them."""
    why = "no frame of gdb's stack is CPython's evaluation loop" if not loops else \
        "gdb's stack has {:,} evaluation-loop call{}, which do not match them (the thread may be entering or " \
        "leaving Python, or gdb's unwinding stopped early)".format(loops, "" if loops == 1 else "s")
    return "pyhang: this thread's {:,} Python frame{} are not shown in this backtrace: {}; `py-bt` lists " \
        "them".format(python_frames, "" if python_frames == 1 else "s", why)


def python_stack_lines(frames, indent, out, frame_lines, omitted=None):
    """Each frame's lines (frame_lines(f, indent, out)), recursion folded: a cycle of frames repeated in a
    row (analysis.recursion) shows once, then how often it repeats; the frames it entered from, below it,
    show again.  Frames with locals (`--locals`) are never folded: each repeat's differ.  `omitted`: the
    FramesOmitted of a stack too deep to keep whole, said where its middle would be."""
    at = omitted.at if omitted is not None else None
    folds = {} if any(f.locals is not None for f in frames) else \
        {r.start: r for r in recursion.stack_runs(frames, at)}
    i = 0
    while i < len(frames):
        if i == at:
            out.append(indent + omitted_line(omitted, len(frames)))
        r = folds.get(i)
        for f in frames[i:i + (r.period if r else 1)]:
            frame_lines(f, indent, out)
        if r is None:
            i += 1
            continue
        out.append(indent + recursion_line(r))
        i = r.end


def recursion_line(r):
    """The line under the first repeat of a recursion.Run: how often the frames above it repeat."""
    more = r.repeats - 1
    if r.period == 1:
        return "[recursion: the frame above {:,} more time{}]".format(more, "" if more == 1 else "s")
    return "[recursion: the {} frames above {:,} more time{}, {:,} frames]".format(
        r.period, more, "" if more == 1 else "s", r.period * more)


def _python_frame_lines(f, indent, out):
    if f.c_call is not None:
        out.append(indent + c_call_line(f.c_call))
    out.append(indent + python_frame_line(f))
    out.extend(frame_source_lines(f, " " * len(indent) + "  "))
    if f.locals is not None:  # report --locals
        out.extend(frame_locals_text(f.locals, f.locals_problem,
                                     " " * len(indent) + "  "))


def _merged_stack(th, out):
    """Native frames with, under each evaluation-loop frame, the Python frames it runs."""
    out.append("  stack (native and Python, innermost first):")
    for i, f in enumerate(th.native_frames):
        out.append("    " + native_frame_line(i, f))
        for k in th.python_at.get(i, ()):
            _python_frame_lines(th.python_frames[k], "          [Python] ", out)


def progress_text(moved, interval):
    """"no progress in 0.5 s", "moved in 0.5 s: cpu, switches": what a second look saw of a blocked thread."""
    if not moved:
        return "no progress in %s s (second look)" % seconds_text(interval)
    return "moved in %s s (second look): %s" % (seconds_text(interval), ", ".join(_MOVED_WORDS.get(m, m) for m in moved))


_MOVED_WORDS = {"cpu": "it used CPU time", "switches": "it woke (context switches)", "syscall": "its system call changed",
                "stack": "its Python frames changed", "gone": "it exited"}


def _thread_block(th, out, names, also=None, merged=False, interpreters=False, interval=None):
    out.append("")
    out.append("%s  GIL: %s" % (thread_header(th, interpreters), th.gil))
    if also:
        out.append("  and %d more thread%s in the same state with the same stacks: %s" % (
            len(also), "" if len(also) == 1 else "s",
            ", ".join("LWP %d" % t.tid for t in also[:12]) + (", ..." if len(also) > 12 else "")))
        objects = [t.blocked_on.address if t.blocked_on is not None else None for t in [th] + list(also)]
        if len(set(objects)) > 1:   # the same wait on objects of their own (each worker's Future)
            out.append("  each waits on an object of its own: %s" % (
                ", ".join("0x%x" % a if a is not None else "?" for a in objects[:13]) +
                (", ..." if len(objects) > 13 else "")))
    if thread_problem(th):
        out.append("  problem: " + thread_problem(th))
    if th.blocked_on:
        out.append("  blocked: " + summary(th.blocked_on, names))
        if th.moved is not None:
            out.append("  " + progress_text(th.moved, interval))
    if th.gc is not None:
        out.append("  " + thread_gc_line(th))
    if merged and th.python_at:
        _merged_stack(th, out)
        return
    if th.python_frames:
        out.append("  Python stack (innermost first):")
        python_stack_lines(th.python_frames, "    ", out, _python_frame_lines, th.python_frames_omitted)
    if th.native_frames:
        out.append("  native frames:")
        out.extend("    " + native_frame_line(i, f) for i, f in enumerate(th.native_frames))


def _wait_site(th):
    """Where a thread waits: "at" its innermost Python frame, and the native
    function (or library) it waits in; "" when neither is known."""
    parts = []
    if th.python_frames:
        parts.append("at " + python_frame_line(th.python_frames[0]))
    named = entry_frame(th.native_frames)
    if named:
        parts.append("in %s (%s)" % (named.function, _lib(named.library)))
    return "; ".join(parts)


def _held_text(kind, address):
    """What a thread of a cycle holds that the previous one waits for."""
    if kind in (WaitKind.PY_JOIN, WaitKind.THREAD_JOIN):
        return "is the thread being joined: its joiner waits until it exits"
    return "holds " + lock_text(kind, address)


# What a thread waiting for itself holds, by the type glibc's decoder read (a recursive or error-checking
# mutex does not block its owner: its lock word says otherwise).
_SELF_MUTEX_TYPES = {"mutex-recursive": "a recursive mutex lets its owner lock it again, so its lock word or type was "
                                        "likely misread",
                     "mutex-errorcheck": "an error-checking mutex returns EDEADLK to its owner, so its lock word or "
                                         "type was likely misread"}


def _frame_at(site):
    """The line of frame `site` (a CodeLine), or None."""
    return python_frame_line(PythonFrame(site.function, site.file, site.line)) if site else None


def self_wait_text(report, e, names):
    """"waits for threading.Lock 0x… (x), which it acquired itself at File …, line N, in f; a Lock is not
    re-entrant": the one edge of a thread waiting for itself (a one-thread cycle)."""
    th = report.thread(e.waiter)
    b = th.blocked_on if th is not None else None
    name = object_name(b.name) if b is not None and b.address == e.address and b.name else None
    what = lock_text(e.kind, e.address) + (" (%s)" % name if name else "")
    if e.kind == WaitKind.PY_LOCK:
        at = _frame_at(references_of(e.facts)) or "an outer frame"
        handler = e.facts.handler if isinstance(e.facts, LockSelfFacts) else None
        if handler:
            interrupted = e.facts.interrupted
            holds = "while that frame holds it" if interrupted == e.facts.references else \
                "while %s, further out, holds it" % at
            return ("waits for %s in its signal handler %s (for %s), which interrupted %s %s (inside `with`, or "
                    "after acquire()): the interrupted code can release it only once the handler returns" % (
                        what, handler.function, signal_text(handler.signal), _frame_at(interrupted) or
                        "its caller", holds))
        return ("waits for %s, which it acquired itself at %s (that frame of its own stack references it: inside "
                "`with`, or holding it after acquire()); a Lock is not re-entrant" % (what, at))
    if e.kind == WaitKind.PY_FUTURE:
        return ("waits for %s, which only a task of the event loop 0x%x completes; that loop runs on this very "
                "thread, which waits instead of running it (run_coroutine_threadsafe(..., loop).result() on the "
                "loop's own thread)" % (what, isinstance(e.facts, LoopSelfFacts) and e.facts.loop or 0))
    glibc_type = getattr(getattr(b, "glibc", None), "kind", None)
    why = _SELF_MUTEX_TYPES.get(glibc_type, "a %s is not re-entrant" % ("normal mutex" if e.kind == WaitKind.MUTEX
                                                                       else "rwlock"))
    return "waits for %s, whose owner word names this thread itself: %s" % (what, why)


def self_wait_lines(report, d, title, names):
    """The lines of deadlock `d`, one thread waiting for what it holds itself."""
    e = d.edges[0]
    th = report.thread(e.waiter)
    out = ["%s (%s): a thread waits for itself:" % (title, d.confidence),
           "  " + (thread_header(th) if th else "LWP %d" % e.waiter),
           "    " + self_wait_text(report, e, names)]
    site = _wait_site(th) if th else None
    if site:
        out.append("    " + site)
    out += ["  advice: " + deadlock_advice(d), ""]
    return out


def render_deadlocks(report, names):
    out = []
    n = len(report.deadlocks)
    for i, d in enumerate(report.deadlocks):
        title = "Found one deadlock" if n == 1 else "Deadlock %d of %d" % (i + 1, n)
        if d.kind == DeadlockKind.AWAIT:
            lines = await_deadlock_lines(report, d, title, names)   # ends with a blank line
            out.extend(lines[:-1] + ["  advice: " + deadlock_advice(d), ""])
            continue
        if len(d.threads) == 1:
            out.extend(self_wait_lines(report, d, title, names))
            continue
        out.append("%s (%s), %d threads:" % (title, d.confidence, len(d.threads)))
        for e in d.edges:
            th = report.thread(e.waiter)
            out.append("  " + (thread_header(th) if th else "LWP %d" % e.waiter))
            for h in d.edges:
                if h.owner == e.waiter:
                    waiter = report.thread(h.waiter)
                    b = waiter.blocked_on if waiter else None
                    name = object_name(b.name) if b is not None and b.address == h.address else None
                    held = database_held_text(h) if isinstance(h.facts, DatabaseFacts) else \
                        pool_held_text(h) if isinstance(h.facts, PoolCheckoutFacts) else \
                        "has not arrived at %s, which it reaches from its Python frames" % lock_text(
                            h.kind, h.address) if isinstance(h.facts, BarrierPartyFacts) else \
                        "reaches %s from its Python frames: likely the thread that sets it" % lock_text(
                            h.kind, h.address) if isinstance(h.facts, ReachesObjectFacts) else \
                        "runs the event loop that must complete " + lock_text(h.kind, h.address) \
                        if h.source == OwnerSource.ASYNCIO_LOOP else \
                        "runs the work item that completes " + lock_text(h.kind, h.address) \
                        if h.source == OwnerSource.WORK_ITEM else _held_text(h.kind, h.address)
                    out.append("    " + held + (" (%s)" % name if name else ""))
            if th and th.blocked_on:
                out.append("    %s" % summary(th.blocked_on, names))
            if e.source == OwnerSource.HEURISTIC:
                out.append("    (likely holder, not recorded by the lock: %s)" % edge_evidence(e))
            if th:
                site = _wait_site(th)
                if site:
                    out.append("    " + site)
        if d.component is not None:
            out.append("  " + component_text(d.component, names))
        out.append("  advice: " + deadlock_advice(d))
        out.append("")
    return out


def component_text(c, names):
    """The line under a cycle that stands for every guessed cycle of its strongly connected component."""
    return ("shown once for %s%d cycles among %d threads that wait on one another only through guessed owners "
            "(%d guessed edges): %s" % ("" if c["all_counted"] else "at least ", c["cycles"], len(c["threads"]),
                                        c["guessed_edges"], ", ".join(names(t) for t in c["threads"][:12]) +
                                        (", ..." if len(c["threads"]) > 12 else "")))


# Waits on an object each call makes its own (a submit's Future): threads in the same code wait on objects
# that differ by address only, and are one block (_thread_block lists the objects).
OWN_OBJECT_WAITS = (WaitKind.PY_FUTURE,)


def _same_wait(b):
    """What two threads' waits must share to be printed as one block: the object (a lock's address: two locks
    are never one), or for a wait in OWN_OBJECT_WAITS its kind, name and owners."""
    if b is None:
        return None
    if b.kind == WaitKind.SYSCALL:   # the same call on the same fd or child (a sleep's deadline may differ)
        s = syscall_of(b)
        return (b.kind, s.name, s.fd, s.child, b.confidence)
    if b.kind in OWN_OBJECT_WAITS:
        return (b.kind, object_name(b.name), tuple(b.owners), b.owner_source, b.confidence)
    return (b.kind, b.address, tuple(b.owners), b.confidence)


def finding_lines(report, names, in_tree=False):
    """Each verdict and fork hazard, most serious first, with its advice.
    `in_tree`: a process of a tree's report, whose answer above already
    says what it waits on in other processes."""
    out = []
    for f in findings(report):
        if isinstance(f, Verdict):
            if in_tree and f.kind == VerdictKind.WAITS_ON_PROCESS:
                continue
            moved = f.facts.moved if f.kind != VerdictKind.NO_PROGRESS else None
            out.append("%s: %s%s" % (TITLES.get(f.kind, f.kind), verdict_text(f, names),
                                     " [a second look saw %s move: this may be contention, not a hang]" %
                                     ", ".join(names(t) for t in moved) if moved else ""))
            advice = verdict_advice(f, report)
        else:
            out.append("Fork hazard [%s]: %s" % (f.kind, evidence(f, names)))
            advice = hazard_advice(f, None if in_tree else report)
        if advice:
            out.append("  advice: " + advice)
    return out


def render_text(report: Report, merged=False, in_tree=False) -> str:
    """The report for people; with `merged`, each thread's native frames with
    the Python frames each evaluation-loop frame runs under it, where they
    pair; `in_tree`: one process of a tree's report (finding_lines)."""
    names = names_of(report)
    out = ["pyhang report: " + describe_target(report)]
    out.extend("warning: " + w for w in warnings(report, fold=True))
    if report.target.proc_record is not None:
        out.extend(proc_record_lines(report.target.proc_record))
    out.append("%d thread%s" % (len(report.threads), "" if len(report.threads) == 1 else "s"))
    out.append("")
    if report.deadlocks:
        out.extend(render_deadlocks(report, names))
    else:
        line = headline(report)
        out.append(IN_TREE_WAITS if in_tree and line.startswith(WAITS_PREFIX) else line)
        accounted = account_line(report)
        if accounted:
            out.append(accounted)
    children = children_line(report)
    if children and not in_tree:
        out.append(children)
    out.extend(finding_lines(report, names, in_tree))
    out.extend("Exiting: " + exiting_text(th, names(th.tid)) for th in report.threads if th.exiting)
    looked = second_look_line(report)
    if looked:
        out.append(looked)
    gc_line = report_gc_line(report, names)
    if gc_line:
        out.append(gc_line)
    involved = {tid for d in report.deadlocks for tid in d.threads}
    several = several_interpreters(report.threads)
    interval = report.second_look.interval if report.second_look is not None else None
    if involved:
        out.append("")
        out.append("Threads in deadlocks:")
        for th in report.threads:
            if th.tid in involved:
                _thread_block(th, out, names, merged=merged, interpreters=several, interval=interval)
        if len(involved) < len(report.threads):
            out.append("")
            out.append("Other threads:")
    # Threads whose stacks and waits are identical take one block.
    groups = {}
    for th in report.threads:
        if th.tid in involved:
            continue
        key = (th.gil, th.interpreter, _same_wait(th.blocked_on), thread_problem(th), th.gc,
               tuple((f.function, f.file, f.line, f.col, f.end_col, f.source,
                      tuple((v.name, v.repr) for v in f.locals or ()))
                     for f in th.python_frames),
               tuple((f.function, f.library) for f in th.native_frames), tuple(th.moved or ()), th.moved is None)
        groups.setdefault(key, []).append(th)
    for members in groups.values():
        _thread_block(members[0], out, names, also=members[1:] if len(members) > 1 else None, merged=merged,
                      interval=interval,
                      interpreters=several)
    out.extend(render_asyncio(report, names, lock_text))
    return "\n".join(out)


def py_bt_header(num, tid, version, gil, interpreter=None, named=True):
    """The first line of `py-bt` and `py-bt-full`: the thread, its Python, the subinterpreter it runs in (not
    said for the main one, 0) and its GIL state.  `named` False: without the thread, which gdb's `thread
    apply` has just named in its own header."""
    where = ", interpreter %d" % interpreter if interpreter else ""
    line = "Python %s%s, GIL: %s" % (version, where, gil)
    return "%s, %s" % (thread_label(num, tid), line) if named else line


def render_thread_command(command, report, thread_states, calls):
    """`py-bt` or `lock-owner` of every thread, as `thread apply all` gives
    them in gdb, from a report made in the command line's process: the
    report's warnings first, then each thread (thread_command_text; one line
    each for `lock-owner`, which names the thread).
    `thread_states`: {tid: decoded thread state or None}; `calls`: {tid: the
    system call it sleeps in (analysis.syscalls.name) or None}."""
    names = names_of(report)
    out = ["warning: " + w for w in warnings(report)]
    for th in report.threads:
        if command == "py-bt":
            out.append("")
        out.append(thread_command_text(command, report, th, thread_states.get(th.tid), calls.get(th.tid), names))
    return "\n".join(out)


def thread_command_text(command, report, th, thread_state, call, names, named=True):
    """`py-bt` or `lock-owner` of the one thread `th` (a ThreadReport of
    `report`): what the command line says of it, and gdb's command of the
    selected thread.  `thread_state`: its decoded thread state or None;
    `call`: the system call it sleeps in or None; `names`: the report's
    ThreadNames; `named` False: the thread is not named again (under gdb's
    `thread apply`, which named it)."""
    if command == "py-bt":
        return render_py_bt(th.gdb_num, th.tid, report.target.python_version, th.gil, thread_state,
                            th.python_frames, named)
    if th.blocked_on is not None:
        return describe(th.blocked_on, th.tid, names, named)
    problem = thread_problem(th)
    if problem:
        return unreadable(th.tid, names, problem, named)
    return not_blocked(th.tid, names, call, report.lock_problem, named)


def _py_bt_frame_lines(f, indent, out):
    if f.c_call is not None:
        out.append(indent + c_call_line(f.c_call))
    out.append(indent + python_frame_line(f))
    out.extend(frame_source_lines(f, indent + "  "))


def render_py_bt(num, tid, version, gil, thread_state, frames, named=True):
    """`py-bt` of one thread.  `thread_state`: the decoded thread state
    (PyThreadFacts; None when the thread has none); `frames`: its PythonFrames.
    `named` False: the thread is not named again (under gdb's `thread apply`, which named it)."""
    if thread_state is None:
        return "%s has no Python thread state: it runs no Python code" % (
            thread_label(num, tid) if named else "no Python thread state here:")
    out = [py_bt_header(num, tid, version, gil, thread_state.interp_id, named)]
    if not frames:
        out.append("  (no Python frame: the thread is between Python calls or has not started)")
    else:
        out.append("Traceback (most recent call first):")
        at, count = thread_state.frames_omitted_at, thread_state.frames_omitted
        omitted = FramesOmitted(at=at, count=count) if count and len(frames) > at else None
        python_stack_lines(frames, "  ", out, _py_bt_frame_lines, omitted)
    if thread_state.problem:
        out.append("  (incomplete: %s)" % unread_text(thread_state.problem))
    return "\n".join(out)

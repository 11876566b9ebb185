"""The text report, for people at a gdb prompt."""
from pyhang.libraries import basename
from pyhang.model.kinds import DeadlockKind, OwnerSource, PythonEvidence, PythonStatus, Unread, VerdictKind, WaitKind
from pyhang.model.report import Report, ThreadReport, entry_frame
from pyhang.render.asyncio import await_deadlock_lines, loop_blocked_text, render_asyncio
from pyhang.render.forks import ADVICE, evidence
from pyhang.render.locks import describe, evidence as wait_evidence, likely_holder_evidence, not_blocked, summary, unreadable
from pyhang.render.names import ThreadNames, lock_reference, object_name, python_frame_line, thread_label, thread_title
from pyhang.render.values import frame_locals_text


def _lib(path):
    return basename(path) or "??"


def native_frame_line(i, f):
    name = f.function + ("+%d" % f.offset if f.offset else "") if f.function else "??"
    return "#%-2d 0x%016x in %s (%s)" % (i, f.pc, name, _lib(f.library))


def thread_header(th: ThreadReport):
    return thread_title(th.gdb_num, th.tid, th.name, th.python_name)


def edge_evidence(e, waiter_blocked=None):
    """Why `e.owner` is thought to hold what `e.waiter` waits for: the
    decoder's own words, else the sentence of the heuristic's facts.
    `waiter_blocked`: the waiter's BlockedOn.  An edge of the waiter's own
    wait carries that wait's evidence (analysis.deadlocks), which is empty
    where the analysis identified the wait itself: worded here as for the
    wait (render.locks.evidence)."""
    facts = e.facts or {}
    if e.evidence:
        return e.evidence
    if e.kind == WaitKind.PY_LOCK:
        return lock_reference(facts.get("references"))
    if "library_frame" in facts:
        return likely_holder_evidence(facts)
    b = waiter_blocked
    if b is not None and b.evidence is None and (b.kind, b.address) == (e.kind, e.address) and e.owner in b.owners:
        return wait_evidence(b) or e.evidence
    return e.evidence


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


def warnings(report: Report):
    """Every warning of the report, in the order they arose."""
    out = list(report.warnings)
    line = python_status_line(report.python_status)
    if line and report.python_status != PythonStatus.NOT_PYTHON:
        out.append(line)
    if report.lock_problem:
        out.append("locks: " + report.lock_problem)
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
        parts.append("no Python runtime found" + _unread_executable(t))
    return ", ".join(parts)


def _unread_executable(t):
    """Why "no Python runtime found" may be wrong: the executable, where a
    runtime linked into it is found, could not be read here; for a core,
    what to give."""
    if not t.executable_problem:
        return ""
    if t.kind == "core":
        return (" (its executable could not be read here, so a runtime linked into it could not be looked for: if "
                "it ran Python, give the interpreter: pyhang report %s /path/to/python3.X, in gdb: gdb "
                "/path/to/python3.X %s)" % (t.core, t.core))
    return " (its executable could not be read here, so a runtime linked into it could not be looked for)"


def holder_blocked_text(facts, names):
    """"Thread 4 (LWP 21727) holds the GIL while blocked in the pause system call in pause (libc.so.6): …"."""
    inside = " in %s" % facts["function"] if facts.get("function") else ""
    if facts.get("library"):
        inside += " (%s)" % basename(facts["library"])
    return ("%s holds the GIL while blocked in the %s system call%s: "
            "no other thread can run Python until it returns" % (names(facts["tid"]), facts["syscall"], inside))


def nothing_can_wake_text(f, names):
    """"Thread 2 (LWP 7) waits to get from the empty queue 0x…, which …: nothing in this process can wake it
    [likely: …]"."""
    waiters = f["waiters"]
    who = ", ".join(names(t) for t in waiters)
    others = " (the others reaching it wait to get from it too)" if len(f["referenced_by"]) > 1 else ""
    partial = "" if f.get("complete") else "; not every frame could be read"
    return ("%s wait%s to get from the empty queue 0x%x%s, which no other thread reaches from its Python "
            "frames%s: nothing in this process can wake %s [%s: a thread may still reach it through a global or "
            "from C%s]" % (
                who, "s" if len(waiters) == 1 else "", f["address"] or 0, " (%s)" % object_name(f["name"]) if f.get("name") else "",
                others,
                "it" if len(waiters) == 1 else "them", f.get("confidence") or "likely", partial))


def _count(n, one, many=None):
    return "%d %s" % (n, one if n == 1 else many or one + "s")


def _still_read_text(read):
    """"the native stacks of 2 threads, the system-call wait of 1 thread, ...": what an
    incomplete report still holds (an `incomplete` verdict's facts["read"])."""
    parts = []
    if read.get("native_stacks"):
        parts.append("the native stacks of %s" % _count(len(read["native_stacks"]), "thread"))
    if read.get("syscall_waits"):
        n = len(read["syscall_waits"])
        parts.append("the system-call wait%s of %s" % ("" if n == 1 else "s", _count(n, "thread")))
    if read.get("lock_waits"):
        n = len(read["lock_waits"])
        parts.append("the lock or object wait%s of %s" % ("" if n == 1 else "s", _count(n, "thread")))
    if read.get("python_status") == PythonStatus.OK:
        parts.append("the Python state")
    if read.get("lock_layouts"):
        parts.append("glibc's lock layouts")
    if read.get("deadlocks"):
        parts.append("the %s above" % _count(read["deadlocks"], "deadlock"))
    return ", ".join(parts) if parts else "nothing else"


def _python_unread_why(f):
    """Why a Python process's state could not be read, from an incomplete verdict's facts."""
    version = "CPython %s" % f["version"] if f.get("version") else "this CPython (its version was not found)"
    path = basename(f.get("python_evidence_path")) or None
    where = " in %s" % path if path else ""
    if f.get("status") == PythonStatus.UNSUPPORTED and f.get("free_threaded"):
        return "%s%s is a free-threaded build (Py_GIL_DISABLED), whose objects, frames and locks pyhang does not " \
               "decode" % (version, where)
    if f.get("status") == PythonStatus.UNSUPPORTED:
        return "pyhang has no layout for %s%s" % (version, where)
    if f.get("status") == PythonStatus.UNREADABLE:
        return "the runtime state of %s%s could not be read from the target's memory" % (version, where)
    if f.get("python_evidence") == PythonEvidence.LIBRARY:
        return "no CPython runtime was found, yet a thread runs code in %s" % path
    if f.get("python_evidence") == PythonEvidence.EXECUTABLE:
        return "no CPython runtime was found, yet the program is %s" % path
    return "status %s" % f.get("status")


def incomplete_text(f, names):
    """The sentence of an `incomplete` verdict: what could not be read, what that hides, what still holds."""
    still = "; still read: " + _still_read_text(f.get("read") or {})
    if f.get("unread") == Unread.PYTHON_STATE:
        return ("the report is incomplete: the Python state of this Python process could not be read (%s), so no "
                "thread's Python stack, GIL state, threading lock or Thread.join is known and no deadlock through "
                "them can be ruled out%s" % (_python_unread_why(f), still))
    if f.get("unread") == Unread.LOCK_LAYOUTS:
        waits = f.get("waits") or []
        listed = ", ".join("%s on futex 0x%x" % (names(w["tid"]), w["futex"]) for w in waits[:_LISTED])
        if len(waits) > _LISTED:
            listed += ", and %d more" % (len(waits) - _LISTED)
        return ("the report is incomplete: glibc's lock layouts are not known (%s), so who holds what %s wait%s "
                "on cannot be named and no deadlock through %s can be ruled out: %s%s" % (
                    f.get("problem") or "unknown reason", _count(len(waits), "thread"),
                    "s" if len(waits) == 1 else "", "it" if len(waits) == 1 else "them", listed, still))
    return "the report is incomplete: %s could not be read%s" % (f.get("unread"), still)


_INCOMPLETE_HEADLINE = {Unread.PYTHON_STATE: "the Python state could not be read",
                        Unread.LOCK_LAYOUTS: "glibc's lock layouts are not known"}


def incomplete_reasons(report):
    """["the Python state could not be read", ...]: what the report's `incomplete` verdicts say could not be read."""
    unread = [v.facts.get("unread") for v in report.verdicts if v.kind == VerdictKind.INCOMPLETE]
    return [_INCOMPLETE_HEADLINE.get(u, "%s could not be read" % u) for u in dict.fromkeys(unread)]


def incomplete_headline(report):
    """"Report incomplete: …": the first line of an answer that cannot be an all-clear, or None."""
    reasons = incomplete_reasons(report)
    return "Report incomplete: %s; no deadlock can be ruled out." % " and ".join(reasons) if reasons else None


def waits_on_process_text(f, names):
    """Threads waiting on a pipe or socket only other processes hold the
    other end of, and the command that examines them together."""
    parts = ["%s waits in %s on fd %s (%s), whose other end only %s hold%s" % (
        names(w["tid"]), w["syscall"], w["fd"], w["link"] or "?",
        ", ".join("PID %d" % p for p in w["pids"]), "s" if len(w["pids"]) == 1 else "")
        for w in f["waits"][:_LISTED]]
    more = " (and %d more threads)" % (len(f["waits"]) - _LISTED) if len(f["waits"]) > _LISTED else ""
    return ("%s%s: whether that ends is up to the other process, which this report does not look at; "
            "`pyhang report --tree -p %d` examines them together and says whether they wait on each other"
            % ("; ".join(parts), more, f["root"]))


def verdict_text(v, names):
    if v.kind == VerdictKind.INCOMPLETE:
        return incomplete_text(v.facts, names)
    if v.kind == VerdictKind.GIL_NOBODY_HOLDS:
        return "every Python thread waits for the GIL and no thread holds it"
    if v.kind == VerdictKind.GIL_HANDOVER:
        return ("the GIL is free and %s wait%s for it while other Python threads do not: the process was stopped "
                "while one thread handed the GIL to another (look again: one of them should hold it)" % (
                    ", ".join(names(t) for t in v.threads), "s" if len(v.threads) == 1 else ""))
    if v.kind == VerdictKind.GIL_HOLDER_BLOCKED:
        return holder_blocked_text(v.facts, names)
    if v.kind == VerdictKind.OWNER_GONE:
        f = v.facts
        if not f["owners"]:
            return ("%s waits on %s whose owner pthread_t 0x%x is no thread of this process: no live thread can "
                    "release it" % (names(f["waiter"]), lock_text(f["kind"], f["address"]), f.get("owner_ident") or 0))
        return ("%s waits on %s 0x%x whose owner LWP %s is not a thread of this process: no live thread can "
                "release it" % (names(f["waiter"]), f["kind"], f["address"] or 0,
                                ", ".join(str(o) for o in f["owners"])))
    if v.kind == VerdictKind.ASYNCIO_LOOP_BLOCKED:
        return loop_blocked_text(v.facts, names, lock_text)
    if v.kind == VerdictKind.WAITS_ON_PROCESS:
        return waits_on_process_text(v.facts, names)
    if v.kind == VerdictKind.POOL_IDLE:
        workers = v.facts["workers"]
        listed = ", ".join("%s (%s)" % (names(w["tid"]), _lib(w["library"])) for w in workers[:_LISTED])
        if len(workers) > _LISTED:
            listed += ", and %d more" % (len(workers) - _LISTED)
        return "%d thread%s of native thread pools wait%s for work, running no Python: %s" % (
            len(workers), "" if len(workers) == 1 else "s", "s" if len(workers) == 1 else "", listed)
    if v.kind == VerdictKind.EXECUTOR_STARVATION:
        f = v.facts
        return ("every worker of the ThreadPoolExecutor whose work queue is 0x%x (%s) waits for the result of a "
                "pending concurrent.futures.Future, which no worker has taken: if they were submitted to this pool, "
                "none can ever run (starvation) [%s: the pool's queue was not read]" % (
                    f["work_queue"], ", ".join(names(t) for t in f["workers"]), f.get("confidence") or "likely"))
    if v.kind == VerdictKind.NOTHING_CAN_WAKE:
        return nothing_can_wake_text(v.facts, names)
    if v.kind == VerdictKind.OWNERS_UNKNOWN:
        waits = v.facts["waits"]
        listed = ", ".join("%s on %s" % (names(w["tid"]), lock_text(w["kind"], w["address"]))
                           for w in waits[:_LISTED])
        if len(waits) > _LISTED:
            listed += ", and %d more" % (len(waits) - _LISTED)
        return "%d thread%s blocked, owner%s unknown: %s" % (
            len(waits), "" if len(waits) == 1 else "s", "" if len(waits) == 1 else "s", listed)
    return "%s: %s" % (v.kind, ", ".join(names(t) for t in v.threads))


_LISTED = 12   # threads named in one line; the rest are counted


def _python_frame_lines(f, indent, out):
    out.append(indent + python_frame_line(f))
    if f.locals is not None:  # report --locals
        out.extend(frame_locals_text({"locals": f.locals, "problem": f.locals_problem},
                                     " " * len(indent) + "  "))


def _merged_stack(th, out):
    """Native frames with, under each evaluation-loop frame, the Python frames it runs."""
    out.append("  stack (native and Python, innermost first):")
    for i, f in enumerate(th.native_frames):
        out.append("    " + native_frame_line(i, f))
        for k in th.python_at.get(i, ()):
            _python_frame_lines(th.python_frames[k], "          [Python] ", out)


def _thread_block(th, out, names, also=None, merged=False):
    out.append("")
    out.append("%s  GIL: %s" % (thread_header(th), th.gil))
    if also:
        out.append("  and %d more thread%s in the same state with the same stacks: %s" % (
            len(also), "" if len(also) == 1 else "s",
            ", ".join("LWP %d" % t.tid for t in also[:12]) + (", ..." if len(also) > 12 else "")))
    if th.problem:
        out.append("  problem: " + th.problem)
    if th.blocked_on:
        out.append("  blocked: " + summary(th.blocked_on, names))
    if merged and th.python_at:
        _merged_stack(th, out)
        return
    if th.python_frames:
        out.append("  Python stack (innermost first):")
        for f in th.python_frames:
            _python_frame_lines(f, "    ", out)
    if th.native_frames:
        out.append("  native frames:")
        out.extend("    " + native_frame_line(i, f) for i, f in enumerate(th.native_frames))


def _wait_site(th):
    """Where a thread waits: its innermost Python frame and the native
    function (or library) it waits in."""
    parts = []
    if th.python_frames:
        parts.append(python_frame_line(th.python_frames[0]))
    named = entry_frame(th.native_frames)
    if named:
        parts.append("in %s (%s)" % (named.function, _lib(named.library)))
    return "; ".join(parts)


_NOUNS = {WaitKind.RWLOCK_READ: "rwlock", WaitKind.RWLOCK_WRITE: "rwlock", WaitKind.PY_LOCK: "threading.Lock",
          WaitKind.PY_RLOCK: "threading.RLock", WaitKind.PY_CONDITION: "threading.Condition",
          WaitKind.PY_QUEUE_GET: "Queue.get of", WaitKind.PY_QUEUE_PUT: "Queue.put of",
          WaitKind.PY_SEMAPHORE: "threading.Semaphore", WaitKind.PY_EVENT: "threading.Event",
          WaitKind.PY_BARRIER: "threading.Barrier", WaitKind.PY_FUTURE: "concurrent.futures.Future",
          WaitKind.PY_JOIN: "Thread.join of", WaitKind.PY_BUFFERED_IO: "the internal lock of buffered I/O object"}


def _held_text(kind, address):
    """What a thread of a cycle holds that the previous one waits for."""
    if kind in (WaitKind.PY_JOIN, WaitKind.THREAD_JOIN):
        return "is the thread being joined: its joiner waits until it exits"
    return "holds " + lock_text(kind, address)


def lock_text(kind, address):
    """"threading.Lock 0x…", "the GIL": a lock held or waited on, as the report names it."""
    if kind == WaitKind.GIL:
        return "the GIL"
    if kind == WaitKind.PY_IMPORT_LOCK:
        return "the import lock of a module" if address is None else "the module import lock 0x%x" % address
    noun = _NOUNS.get(kind, kind)
    return "%s 0x%x" % (noun, address) if address is not None else noun


def render_deadlocks(report, names):
    out = []
    n = len(report.deadlocks)
    for i, d in enumerate(report.deadlocks):
        title = "Found one deadlock" if n == 1 else "Deadlock %d of %d" % (i + 1, n)
        if d.kind == DeadlockKind.AWAIT:
            out.extend(await_deadlock_lines(report, d, title, names))
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
                    held = _held_text(h.kind, h.address) if h.source != OwnerSource.ASYNCIO_LOOP else \
                        "runs the event loop that must complete " + lock_text(h.kind, h.address)
                    out.append("    " + held + (" (%s)" % name if name else ""))
            if th and th.blocked_on:
                out.append("    %s" % summary(th.blocked_on, names))
            if e.source == OwnerSource.HEURISTIC:
                out.append("    (likely holder, not recorded by the lock: %s)" % edge_evidence(e))
            if th:
                site = _wait_site(th)
                if site:
                    out.append("    at " + site)
        out.append("")
    return out


def _same_wait(b):
    """What two threads' waits must share to be printed as one block."""
    if b is None:
        return None
    if b.kind == WaitKind.SYSCALL:   # the same call on the same fd or child (a sleep's deadline may differ)
        s = b.lock or {}
        return (b.kind, s.get("name"), s.get("fd"), s.get("child"), b.confidence)
    return (b.kind, b.address, tuple(b.owners), b.confidence)


def render_text(report: Report, merged=False) -> str:
    """The report for people; with `merged`, each thread's native frames with
    the Python frames each evaluation-loop frame runs under it, where they pair."""
    names = names_of(report)
    out = ["pyhang report: " + describe_target(report)]
    out.extend("warning: " + w for w in warnings(report))
    out.append("%d thread%s" % (len(report.threads), "" if len(report.threads) == 1 else "s"))
    out.append("")
    headline = incomplete_headline(report)
    if report.deadlocks:
        out.extend(render_deadlocks(report, names))
    elif headline:
        # Never a false all-clear: what could not be read is said first, the verdicts say the rest.
        out.append(headline)
    elif any(v.kind == VerdictKind.OWNERS_UNKNOWN for v in report.verdicts):
        # Never a false all-clear: the verdict below names what is not known.
        out.append("No deadlock found among the waits whose owners pyhang can name.")
    elif any(v.kind == VerdictKind.WAITS_ON_PROCESS for v in report.verdicts):
        out.append("No deadlock found within this process; it waits on other processes, which it does not look at.")
    else:
        out.append("No deadlock found.")
    for v in report.verdicts:
        out.append("Verdict: " + verdict_text(v, names))
    for h in report.fork_hazards:
        out.append("Fork hazard [%s]: %s" % (h.kind, evidence(h, names)))
        out.append("  advice: " + ADVICE[h.kind])
    involved = {tid for d in report.deadlocks for tid in d.threads}
    if involved:
        out.append("")
        out.append("Threads in deadlocks:")
        for th in report.threads:
            if th.tid in involved:
                _thread_block(th, out, names, merged=merged)
        if len(involved) < len(report.threads):
            out.append("")
            out.append("Other threads:")
    # Threads whose stacks and waits are identical take one block.
    groups = {}
    for th in report.threads:
        if th.tid in involved:
            continue
        key = (th.gil, _same_wait(th.blocked_on), th.problem,
               tuple((f.function, f.file, f.line, tuple((v["name"], v["repr"]) for v in f.locals or ()))
                     for f in th.python_frames),
               tuple((f.function, f.library) for f in th.native_frames))
        groups.setdefault(key, []).append(th)
    for members in groups.values():
        _thread_block(members[0], out, names, also=members[1:] if len(members) > 1 else None, merged=merged)
    out.extend(render_asyncio(report, names, lock_text))
    return "\n".join(out)


def py_bt_header(num, tid, version, gil):
    """The first line of `py-bt` and `py-bt-full`: the thread, its Python and its GIL state."""
    return "%s, Python %s, GIL: %s" % (thread_label(num, tid), version, gil)


def render_thread_command(command, report, thread_states, calls):
    """`py-bt` or `lock-owner` of every thread, as `thread apply all` gives
    them in gdb, from a report made without gdb (`--no-stop`): the report's
    warnings first (it was not stopped), then each thread (one line each for
    `lock-owner`, which names the thread).
    `thread_states`: {tid: decoded thread state or None}; `calls`: {tid: the
    system call it sleeps in (analysis.syscalls.name) or None}."""
    names = names_of(report)
    out = ["warning: " + w for w in warnings(report)]
    for th in report.threads:
        if command == "py-bt":
            out.append("")
            out.append(render_py_bt(th.gdb_num, th.tid, report.target.python_version, th.gil,
                                    thread_states.get(th.tid), th.python_frames))
        elif th.blocked_on is not None:
            out.append(describe(th.blocked_on, th.tid, names))
        elif th.problem:
            out.append(unreadable(th.tid, names, th.problem))
        else:
            out.append(not_blocked(th.tid, names, calls.get(th.tid), report.lock_problem))
    return "\n".join(out)


def render_py_bt(num, tid, version, gil, thread_state, frames):
    """`py-bt` of one thread.  `thread_state`: the decoded thread state (None
    when the thread has none); `frames`: its PythonFrames."""
    label = thread_label(num, tid)
    if thread_state is None:
        return "%s has no Python thread state: it runs no Python code" % label
    out = [py_bt_header(num, tid, version, gil)]
    if not frames:
        out.append("  (no Python frame: the thread is between Python calls or has not started)")
    else:
        out.append("Traceback (most recent call first):")
        out.extend("  " + python_frame_line(f) for f in frames)
    if thread_state.get("problem"):
        out.append("  (incomplete: %s)" % thread_state["problem"])
    return "\n".join(out)

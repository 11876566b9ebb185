"""asyncio in the report: the loops with their threads and tasks, what each
task awaits, await cycles, loops blocked inside a task's step."""
from pyhang.model.kinds import AwaitKind, WaitKind
from pyhang.render.syscalls import call_name
from pyhang.render.unread import unread_text

# "waits for ..." per AwaitKind of an asyncio primitive.
_PRIMITIVES = {
    AwaitKind.LOCK: "to acquire %s",
    AwaitKind.SEMAPHORE: "to acquire %s",
    AwaitKind.EVENT: "for %s to be set",
    AwaitKind.CONDITION: "to be notified on %s",
    AwaitKind.QUEUE_GET: "to get from %s",
    AwaitKind.QUEUE_PUT: "to put to %s",
}


def loop_of(report, task):
    """The AsyncioLoop a task model belongs to, or None."""
    return next((loop for loop in report.asyncio or [] if any(t is task for t in loop.tasks)), None)


def _frame(f):
    return 'File "%s", line %s, in %s' % (f.file, f.line if f.line >= 0 else "?", f.function)


def _tasks(names_):
    return ", ".join("'%s'" % n for n in names_) or "tasks pyhang could not read"


def _sleep_left(remaining, loop_blocked):
    """" (in 3599.2 s)", or, past the deadline, how long overdue and why:
    the loop runs a timer only when it comes back from the task or callback
    it is stepping (`loop_blocked`: it is known to be blocked in one)."""
    if remaining is None:
        return ""
    if remaining >= 0:
        return " (in %.1f s)" % remaining
    why = ("its event loop is blocked inside a task's step and runs no timer until that returns" if loop_blocked
           else "its event loop has not come back to run its timers: it is blocked or busy in a task or callback")
    return " (overdue by %.1f s: %s)" % (-remaining, why)


def await_text(a, names, loop_blocked=False):
    """"awaits task 'cycle-b'", "sleeps until loop time 1234.5 (in 3599.2 s)", ...
    (`loop_blocked`: the task's loop is blocked inside another task's step)."""
    if a.kind == AwaitKind.TASK:
        return "awaits task %s" % _tasks(a.tasks)
    if a.kind == AwaitKind.GATHER:
        return "awaits gather() of %s" % _tasks(a.tasks)
    if a.kind == AwaitKind.SLEEP:
        if a.when is None:
            return "sleeps (asyncio.sleep)"
        return "sleeps until loop time %.3f%s" % (a.when, _sleep_left(a.remaining, loop_blocked))
    if a.kind in _PRIMITIVES:
        return "waits " + _PRIMITIVES[a.kind] % ("asyncio.%s" % (a.obj_type or "?") + (" 0x%x" % a.obj if a.obj else ""))
    if a.kind == AwaitKind.EXECUTOR:
        return "awaits run_in_executor job: concurrent.futures.Future 0x%x, run by %s" % (
            a.chained or 0, names(a.thread))
    if a.kind == AwaitKind.THREAD_FUTURE:
        return "awaits a future chained to concurrent.futures.Future 0x%x (completed by whoever runs it)" % (
            a.chained or 0)
    what = "%s 0x%x" % (a.type or "future", a.address or 0)
    if a.tasks:
        return "awaits %s, completed by task %s" % (what, _tasks(a.tasks))
    return "awaits %s (%s)" % (what, a.state or "state unknown")


def task_lines(t, names, indent="    ", loop_blocked=False):
    head = "task '%s' 0x%x" % (t.name, t.address) + ("" if t.native else " (pure-Python Task)")
    if t.running:
        head += ": running now (its loop is stepping it)"
    elif t.state != "pending":
        head += ": %s" % t.state
        if t.exception_type:
            head += " with %s" % t.exception_type
            if t.exception_unretrieved:
                head += ", never retrieved"
    elif t.awaits is not None:
        head += ": " + await_text(t.awaits, names, loop_blocked)
    else:
        head += ": ready to run, waiting for its loop"
    if t.completes_for:
        head += "; %s wait%s for it" % (", ".join(names(x) for x in t.completes_for),
                                        "s" if len(t.completes_for) == 1 else "")
    out = [indent + head]
    out.extend(indent + "  " + _frame(f) for f in t.stack)
    if t.problem:
        out.append(indent + "  (incomplete: %s)" % unread_text(t.problem))
    return out


def loop_title(loop, names):
    who = "run by %s" % names(loop.thread) if loop.thread is not None else "not running in any thread"
    what = "%s 0x%x" % (loop.type or "event loop", loop.address) if loop.address else "tasks of no known loop"
    counts = []
    if loop.ready is not None:
        counts.append("%d ready callback%s" % (loop.ready, "" if loop.ready == 1 else "s"))
    if loop.scheduled is not None:
        counts.append("%d timer%s" % (loop.scheduled, "" if loop.scheduled == 1 else "s"))
    return "%s, %s%s" % (what, who, " (%s)" % ", ".join(counts) if counts else "")


def render_asyncio(report, names, holds_text):
    """The asyncio section of the text report (nothing without asyncio)."""
    if not report.asyncio:
        return []
    out = ["", "asyncio:"]
    for loop in report.asyncio:
        pending = sum(1 for t in loop.tasks if t.state == "pending")
        out.append("  Event loop %s: %d task%s, %d pending" % (
            loop_title(loop, names), len(loop.tasks), "" if len(loop.tasks) == 1 else "s", pending))
        if loop.blocked:
            out.append("    BLOCKED: " + loop_blocked_text(loop.blocked, names, holds_text))
        for t in loop.tasks:
            out.extend(task_lines(t, names, loop_blocked=loop.blocked is not None))
    return out


def loop_blocked_text(facts, names, holds_text):
    """The verdict of an event loop whose thread is blocked inside a task's
    step.  `holds_text(kind, address)` names what the thread waits on."""
    where = " at %s" % _frame_dict(facts.frame) if facts.frame else ""
    if facts.program_frame:   # the program's own call, below the library frames it blocks in
        where = " at %s, inside %s (%s)" % (_frame_dict(facts.program_frame), facts.frame.function,
                                            facts.frame.file.rsplit("/", 1)[-1])
    if facts.wait == WaitKind.SYSCALL:
        call = facts.wait_call
        wait = ", waiting in the %s system call" % call_name(call) if call is not None else ", waiting in a system call"
    elif facts.wait:
        wait = ", waiting on %s" % holds_text(facts.wait, facts.wait_address)
    else:
        wait = ""
    return ("the event loop of %s is blocked inside task '%s': a synchronous call in its coroutine%s%s; "
            "%s ready callback%s and %d pending task%s cannot run until it returns" % (
                names(facts.tid), facts.task, where, wait,
                "?" if facts.ready is None else facts.ready, "" if facts.ready == 1 else "s",
                facts.pending or 0, "" if facts.pending == 1 else "s"))


def _frame_dict(f):
    return 'File "%s", line %s, in %s' % (f.file, f.line, f.function)


def await_deadlock_lines(report, d, title, names):
    """The lines of an await cycle in the deadlock list."""
    out = ["%s (%s), await cycle of %d asyncio tasks:" % (title, d.confidence, len(d.tasks))]
    for t in d.tasks:
        loop = loop_of(report, t)
        on = " on the loop of %s" % names(loop.thread) if loop is not None and loop.thread is not None else ""
        blocked = loop is not None and loop.blocked is not None
        out.append("  task '%s'%s %s" % (t.name, on, await_text(t.awaits, names, blocked) if t.awaits else "awaits ?"))
        if t.stack:
            out.append("    at " + _frame(t.stack[0]))
    out.append("")
    return out


def _awaits_json(a):
    if a is None:
        return None
    return {"kind": a.kind, "address": a.address, "type": a.type, "state": a.state, "tasks": list(a.tasks),
            "task_addresses": list(a.task_addresses), "object": a.obj, "object_type": a.obj_type,
            "when": a.when, "remaining": a.remaining, "thread": a.thread, "chained": a.chained}


def task_json(t):
    return {"name": t.name, "address": t.address, "state": t.state, "native": t.native, "running": t.running,
            "stack": [{"function": f.function, "file": f.file, "line": f.line} for f in t.stack],
            "awaits": _awaits_json(t.awaits), "exception_type": t.exception_type,
            "exception_unretrieved": t.exception_unretrieved, "completes_for": list(t.completes_for),
            "problem": unread_text(t.problem)}


def asyncio_json(report, names, holds_text):
    return [{"thread": loop.thread, "loop": loop.address or None, "type": loop.type, "ready": loop.ready,
             "scheduled": loop.scheduled, "running_task": loop.running_task,
             "blocked": loop_blocked_text(loop.blocked, names, holds_text) if loop.blocked else None,
             "tasks": [task_json(t) for t in loop.tasks]} for loop in report.asyncio or []]


def deadlock_json(report, d):
    """The keys an await cycle adds to its deadlock."""
    return {"kind": d.kind, "tasks": [{"name": t.name, "address": t.address,
                                       "thread": getattr(loop_of(report, t), "thread", None),
                                       "awaits": t.awaits.kind if t.awaits else None} for t in d.tasks]}


def render_py_tasks(report, names, holds_text):
    """`py-tasks`: the await cycles, then every loop with its tasks."""
    if not report.asyncio:
        return "no asyncio task or event loop in this process (asyncio %s)" % (
            "was not read" if report.asyncio is None else "has none")
    out = []
    cycles = [d for d in report.deadlocks if d.kind == "await"]
    for i, d in enumerate(cycles):
        title = "Found one await cycle" if len(cycles) == 1 else "Await cycle %d of %d" % (i + 1, len(cycles))
        out.extend(await_deadlock_lines(report, d, title, names))
    return "\n".join(out + render_asyncio(report, names, holds_text)[2:])

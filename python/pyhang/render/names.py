"""How a thread is named in every sentence pyhang writes, and how an
object is named by the variable of the program that reaches it."""
from pyhang.model.kinds import Confidence, ThreadIssueKind, WaitKind
from pyhang.model.live_kinds import UnwindStop
from pyhang.model.report import PythonFrame
from pyhang.model.waits import CodeLine
from pyhang.render.exits import signal_text
from pyhang.render.unread import unread_text


def thread_label(num, tid):
    """"Thread 4 (LWP 21727)": gdb's number and the LWP."""
    return "Thread %d (LWP %d)" % (num, tid)


def thread_title(num, tid, name=None, python_name=None):
    """"Thread 4 (LWP 21727) "worker" (Python: "Thread-2")": the label, the
    kernel's name and the Python one when it says more."""
    out = thread_label(num, tid) + (' "%s"' % name if name else "")
    # The kernel keeps 15 bytes of a name: a Python name it cut short is the same name.
    if python_name and not (name and python_name.startswith(name)):
        out += ' (Python: "%s")' % python_name
    return out


class ThreadNames:
    """TID → "Thread N (LWP x)" for the threads of one process; a TID that
    is not one of them is "LWP x"."""

    def __init__(self, numbered):
        """`numbered`: (gdb number, TID) pairs, or objects with .num/.tid or
        .gdb_num/.tid."""
        self.num = {}
        for x in numbered:
            if isinstance(x, tuple):
                num, tid = x
            else:
                num, tid = getattr(x, "gdb_num", None) or getattr(x, "num"), x.tid
            self.num[tid] = num

    def alive(self, tid):
        return tid in self.num

    def __call__(self, tid):
        if tid in self.num:
            return thread_label(self.num[tid], tid)
        return "LWP %d" % tid


def object_name(path):
    """The name of an object by the variable that reaches it (a path of
    PythonLocks.object_names): "__main__.config_lock", "mymodule.pool._lock",
    or, for an instance a frame's local refers to, "self._lock of Cache at
    0x7f…"; None for no path."""
    if not path:
        return None
    if path.module:
        return ".".join(p for p in (path.module, path.variable, path.attribute) if p)
    return "%s.%s of %s at 0x%x" % (path.variable, path.attribute or "?", path.owner_type or "?", path.owner or 0)


def c_call_line(c):
    """The C callable a Python frame calls, as a stack entry of its own above
    that frame: `<built-in function sleep>  [C: time.sleep]`."""
    sure = "" if c.confidence == Confidence.CERTAIN else ", " + c.confidence
    return "%s  [C: %s%s]" % (c.repr, c.function, sure)


def python_frame_line(f):
    line = 'File "%s", line %s, in %s' % (f.file, f.line if f.line >= 0 else "?", f.function)
    return line + "  [signal handler for %s]" % signal_text(f.signal) if f.signal is not None else line


def frame_source_lines(f, indent):
    """The frame's source line under it, `indent` deep, and (3.11+) carets
    under the span of the instruction it runs, as a Python traceback shows
    them: none when the line was not read, none when the span is not within
    this one line or covers all of it."""
    if not f.source:
        return []
    out = [indent + f.source]
    span = _caret_span(f)
    if span is not None:
        out.append(indent + " " * span[0] + "^" * (span[1] - span[0]))
    return out


def _caret_span(f):
    """(start, end) characters of `f.source` the instruction covers, or None."""
    if f.col < 0 or f.end_col <= f.col or f.end_line != f.line or f.source.endswith("..."):
        return None
    line = (" " * f.source_indent + f.source).encode("utf-8")   # columns are UTF-8 byte offsets

    def chars(col):
        return len(line[:col].decode("utf-8", errors="ignore")) - f.source_indent
    start, end = chars(f.col), chars(f.end_col)
    if start < 0 or end > len(f.source) or end <= start or (start == 0 and end == len(f.source)):
        return None
    return start, end


def lock_reference(where):
    """Why a thread whose frame `where` (a model.waits.CodeLine, or None when
    not known) references a Lock is thought to hold it."""
    site = python_frame_line(PythonFrame(where.function, where.file, where.line)) if where else \
        "its innermost Python frames"
    return "references the lock in %s (inside `with lock:`, or holding it in a variable)" % site


_NOUNS = {WaitKind.SQLITE_BUSY: "a SQLite database lock", WaitKind.COLLECTIVE: "a distributed collective",
          WaitKind.GRPC_CALL: "a gRPC call", WaitKind.RWLOCK_READ: "rwlock", WaitKind.RWLOCK_WRITE: "rwlock", WaitKind.PY_LOCK: "threading.Lock",
          WaitKind.PY_RLOCK: "threading.RLock", WaitKind.PY_CONDITION: "threading.Condition",
          WaitKind.PY_QUEUE_GET: "Queue.get of", WaitKind.PY_QUEUE_PUT: "Queue.put of",
          WaitKind.PY_QUEUE_JOIN: "Queue.join of",
          WaitKind.PY_SEMAPHORE: "threading.Semaphore", WaitKind.PY_EVENT: "threading.Event",
          WaitKind.PY_BARRIER: "threading.Barrier", WaitKind.PY_FUTURE: "concurrent.futures.Future",
          WaitKind.PY_JOIN: "Thread.join of", WaitKind.PY_BUFFERED_IO: "the internal lock of buffered I/O object"}


def lock_text(kind, address):
    """"threading.Lock 0x…", "the GIL": a lock held or waited on, as the report names it."""
    if kind == WaitKind.GIL:
        return "the GIL"
    if kind == WaitKind.PY_IMPORT_LOCK:
        return "the import lock of a module" if address is None else "the module import lock 0x%x" % address
    if kind == WaitKind.SYSCALL:
        return "a system call"   # (its call is in the wait's own facts: render.syscalls words it)
    noun = _NOUNS.get(kind, kind)
    return "%s 0x%x" % (noun, address) if address is not None else noun


_THREAD_ISSUES = {
    ThreadIssueKind.CANNOT_UNWIND: lambda i: "cannot unwind: %s" % i.text,
    ThreadIssueKind.CANNOT_SELECT: lambda i: "cannot select thread: %s" % i.text,
    ThreadIssueKind.LISTED_TWICE: lambda i: ("gdb lists this thread twice: as LWP %d (the TID in its PID namespace) "
                                             "and as LWP %d (the host's); only the second has registers"
                                             % (i.number, i.other)),
    ThreadIssueKind.STACK_CUT: lambda i: "its native stack ends after %d frame%s: %s" % (
        i.number, "" if i.number == 1 else "s", _UNWIND_STOPS.get(i.text, "the unwinder stopped (%s)" % i.text)),
    ThreadIssueKind.RUNNING: lambda i: "running: it was not stopped, so its registers and native frames are not known",
    ThreadIssueKind.NO_SYSCALL_RECORD: lambda i: "its system-call record could not be read (%s)" % (
        i.text or "no record"),
    ThreadIssueKind.FRAMES_MOVED: lambda i: "its Python frames changed while they were read (it was running)",
    ThreadIssueKind.NOT_STOPPED: lambda i: ("it did not stop within %d ms of being asked to (asleep in the kernel, "
                                            "where no signal reaches it): what it waits in is its system-call record "
                                            "in /proc, read while it went on" % i.number),
}

# Where pyhang's unwinder ended a thread's stack (model.live_kinds.UnwindStop), for STACK_CUT.
_UNWIND_STOPS = {
    UnwindStop.NO_CFI: "no call-frame information covers the next pc (code built without it, or generated code)",
    UnwindStop.UNREADABLE: "its stack or call-frame information could not be read there",
    UnwindStop.UNSUPPORTED: "the call-frame information there is of a form pyhang's unwinder does not handle",
    UnwindStop.BAD_FRAME: "the stack makes no sense there (a frame that does not move up the stack, or a cycle)",
    UnwindStop.REGISTER_UNKNOWN: ("the unwinder stopped (register-unknown) where a frame needs a register no frame "
                                  "below it saved, and the kernel does not record for a process that runs"),
}


def thread_issues_text(problem):
    """What its collector could not read about a thread (ThreadIssues), in one line; None for none."""
    if not problem:
        return None
    return "; ".join(_thread_issue_text(i) for i in problem)


def _thread_issue_text(issue):
    words = _THREAD_ISSUES.get(getattr(issue, "kind", None))
    try:
        return words(issue) if words else str(getattr(issue, "kind", issue))
    except (TypeError, ValueError):   # data another pyhang wrote, or damaged: said by its kind
        return str(issue.kind)


def thread_problem(th):
    """What could not be read about a thread (ThreadReport), in one line, or None."""
    parts = [p for p in (thread_issues_text(th.problem), unread_text(th.python_problem)) if p]
    if th.hidden_interpreters:
        parts.append("thread states of interpreters %s carry this thread's id too; 3.12 reuses an interpreter's "
                     "first thread state on any thread, their frames are not shown here"
                     % ", ".join(map(str, th.hidden_interpreters)))
    return "; ".join(parts) or None

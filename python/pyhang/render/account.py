"""The closed-world account in words (analysis.account, analysis.progress): the
line under an all-clear that counts every thread's class, the raw facts of
waits no class explains (the `unaccounted` verdict's), and what the second
look saw.  Sentences only: the analysis decided every fact they word."""
from pyhang.libraries import basename
from pyhang.model.kinds import AccountReason, ThreadState
from pyhang.render.names import lock_text
from pyhang.render.target import reader_failure

LISTED = 12   # threads named in one line; the rest are counted


def count(n, one, many=None):
    """"3 threads", "1 thread"."""
    return "%d %s" % (n, one if n == 1 else many or one + "s")


def library(path):
    """A native frame's library by its file's name, "??" when not known."""
    return basename(path) or "??"


def _raw_call_text(w):
    """"read on fd 5 (pipe:[123])", "semop (arguments 0x3, 0x7ffd…, 0x1)": the call an unaccounted wait (an
    UnaccountedWait) is in."""
    if w.call is None:
        if w.futex and w.reason != AccountReason.SLEEP_UNKNOWN:   # (that one's lock is known)
            return "futex(2) on the word 0x%x" % w.futex
        return lock_text(w.kind, w.address) if w.kind else "an unknown wait"
    text = w.call
    if w.fd is not None:
        text += " on fd %d" % w.fd + (" (%s)" % w.link if w.link else "")
    elif w.arguments:
        text += " (arguments %s)" % ", ".join("0x%x" % a for a in w.arguments[:3] if a is not None)
    return text


def _innermost_text(w):
    """"; innermost: File "x.py", line 3, in f; semop (libc.so.6)" of an unaccounted wait, or ""."""
    parts = []
    if w.python:
        p = w.python
        parts.append('File "%s", line %s, in %s' % (p.file, p.line, p.function))
    if w.native and w.native.function:
        parts.append("%s (%s)" % (w.native.function, library(w.native.library)))
    return "; innermost: " + "; ".join(parts) if parts else ""


def seconds_text(interval):
    return "?" if interval is None else ("%.1f" % interval).rstrip("0").rstrip(".") if interval < 10 else \
        "%d" % interval


def second_look_line(report):
    """"Second look after 0.5 s: 3 blocked threads made no progress; 1 moved (Thread 4: cpu, switches)." of a
    report with a second look; "One look: …" when a thread is a problem and no second look was taken; else
    None."""
    look = report.second_look
    problems = [t for t in report.threads if t.account is not None and t.account.state in ThreadState.PROBLEMS]
    if look is None:
        if not problems or report.target.kind != "live":
            return None
        return ("One look: whether these waits move, `pyhang report -p %d` says (it looks again without stopping "
                "the process)" % (report.target.pid or 0))
    if look.problem is not None:
        return "Second look after %s s: not taken (%s)" % (seconds_text(look.interval), look_problem_text(look))
    blocked = [t for t in report.threads if t.blocked_on is not None and t.moved is not None]
    still = [t for t in blocked if not t.moved]
    moved = [t for t in report.threads if t.moved]
    parts = ["%d of %s made no progress" % (len(still), count(len(blocked), "blocked thread"))]
    if moved:
        parts.append("%d moved (%s)" % (len(moved), "; ".join(
            "Thread %d (LWP %d): %s" % (t.gdb_num, t.tid, ", ".join(t.moved)) for t in moved[:LISTED])))
    return "Second look after %s s: %s." % (seconds_text(look.interval), "; ".join(parts))


def pids_text(pids):
    return ", ".join("PID %d" % p for p in pids)


# Why an unaccounted wait is not accounted for, by model.kinds.AccountReason: words after "Thread N waits in CALL".
_UNACCOUNTED_WHY = {
    AccountReason.NO_FD_TABLE: lambda w: "; this core records no fd table (one `pyhang gcore` makes does), so what "
                                         "the fd is and who holds its other end are not known",
    AccountReason.OWN_PROCESS: lambda w: (", a file lock this process itself holds (under another open file)"
                                          if w.call in ("flock", "fcntl") else
                                          ", whose other end only this process itself holds: none of its threads is "
                                          "known to be about to %s it" % ("write" if w.direction == "read"
                                                                        else "read")),
    AccountReason.HOLDERS_UNKNOWN: lambda w: "; who holds %s could not be read" % (
        "the lock" if w.call in ("flock", "fcntl") else "its other end"),
    AccountReason.NO_OTHER_END: lambda w: "; no process holds its other end",
    AccountReason.OTHER_PROCESS: lambda w: ", which only %s can end" % pids_text(w.pids),
    AccountReason.CHILD: lambda w: " for %s to exit" % (("its child " + pids_text(w.pids)) if w.pids
                                                        else "a child"),
    AccountReason.FILE_LOCK: lambda w: ", a file lock %s hold%s" % (pids_text(w.pids),
                                                                  "s" if len(w.pids) == 1 else ""),
    AccountReason.PEER: lambda w: "; its peer is no process found on this machine (another host, or a network "
                                  "namespace pyhang did not scan)",
    AccountReason.SHARED_FUTEX: lambda w: ", a process-shared word (a multiprocessing Lock, Semaphore or Queue's "
                                          "lock): another process may hold it and wake it",
    AccountReason.SLEEP_UNKNOWN: lambda w: ", held by %s, which sleep%s until a deadline on its clock; a core "
                                           "gdb or the kernel wrote records no clock, so how long is not known "
                                           "(live, or from a core `pyhang gcore` wrote, it is)" % (
        ", ".join("LWP %d" % t for t in w.sleepers or ()) or "its holder",
        "s" if len(w.sleepers or ()) <= 1 else ""),
}


def unaccounted_text(f, names):
    """Each wait of the `unaccounted` verdict as pyhang read it, and why no class explains it."""
    parts = []
    for w in f.waits[:LISTED]:
        why = _UNACCOUNTED_WHY.get(w.reason)
        tail = why(w) if why else ": pyhang does not model what ends this wait"
        parts.append("%s waits in %s%s%s" % (names(w.tid), _raw_call_text(w), tail, _innermost_text(w)))
    if len(f.waits) > LISTED:
        parts.append("and %d more threads" % (len(f.waits) - LISTED))
    return "; ".join(parts)


def account_line(report):
    """"Every thread accounted for: 2 running, 24 idle, 1 blocked on threads that can progress." under an
    all-clear, or None when some thread is a problem (its finding says so) or no account was made."""
    found = {}
    for t in report.threads:
        if t.account is None:
            return None
        found[t.account.state] = found.get(t.account.state, 0) + 1
    if not found or any(s in ThreadState.PROBLEMS for s in found):
        return None
    words = {ThreadState.RUNNING: "running", ThreadState.IDLE: "idle (waiting for work, a signal or a time)",
             ThreadState.BLOCKED: "blocked on threads that can progress"}
    return "Every thread accounted for: %s." % ", ".join("%d %s" % (found[s], words[s]) for s in ThreadState.ALL
                                                          if s in found)


def children_line(report):
    """"Its children are not in this report: PID 7, PID 8; …" of a live process with children, else None."""
    if not report.children:
        return None
    listed = pids_text(report.children[:LISTED]) + (" and %d more" % (len(report.children) - LISTED)
                                                   if len(report.children) > LISTED else "")
    return ("Its children are not in this report: %s; `pyhang report --tree -p %d` looks at them too (a hang in "
            "one of them is not this process's)" % (listed, report.target.pid or 0))


def look_problem_text(look):
    """Why the second look could not be taken (SecondLook.problem: a ReaderFailure's data), in words."""
    p = look.problem
    if isinstance(p, dict):
        return reader_failure(p.get("reason"), p.get("path") or "", p.get("number") or 0)
    return p

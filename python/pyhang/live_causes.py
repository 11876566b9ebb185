"""Why a live process cannot be read, as /proc shows it (data; the words
are render.failures'): it is not there (and whether a process of a PID
namespace, a container, has that pid inside it), it exited while it was
read, or this user may not read it (another user's process, or
/proc/sys/kernel/yama/ptrace_scope), or, for a stop, another process
traces it already.  The command line asks these once a
read failed, or after a read without stopping, whose reads may have been
of a process that was going away (not_read: the command line's first line and hint), and once pyhang
could not stop one itself (not_stopped)."""
import errno
import os

from pyhang import procfs
from pyhang.analysis.syscall_names import NAMES

MAX_SCANNED = 1 << 16    # processes whose NSpid is read, at most, to find one a container calls `pid`


def _status_ids(pid, field):
    """The numbers of a /proc/PID/status line ("Uid", "NSpid"), or None."""
    text = procfs.read_text("/proc/%d/status" % pid, 1 << 16)
    for line in (text or "").splitlines():
        if line.startswith(field + ":"):
            try:
                return [int(x) for x in line.split()[1:]]
            except ValueError:
                return None
    return None


def namespaced_as(pid):
    """[host pid] of the processes that PID namespaces below ours (containers) call `pid`."""
    found = []
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()][:MAX_SCANNED]
    except OSError:
        return []
    for host in pids:
        ids = _status_ids(host, "NSpid")
        if ids and len(ids) > 1 and ids[-1] == pid and host != pid:
            found.append(host)
    return sorted(found)


def _user(uid):
    try:
        import pwd
        return "%s (uid %d)" % (pwd.getpwuid(uid).pw_name, uid)
    except (ImportError, KeyError):
        return "uid %d" % uid


def ptrace_scope():
    text = procfs.read_text("/proc/sys/kernel/yama/ptrace_scope", 64)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def permission(pid):
    """Why this process may not read process `pid`, as data, or None when nothing says it may not:
    {"owner": its user, "me": ours} when it is another user's (and we are not root), else
    {"scope": ptrace_scope} when Yama restricts reading even one's own processes."""
    uids = _status_ids(pid, "Uid")
    me = os.geteuid()
    if uids and me != 0 and uids[1] != me:
        return {"owner": _user(uids[1]), "me": _user(me)}
    scope = ptrace_scope()
    if scope and scope >= 1 and me != 0:
        return {"scope": scope}
    return None


def tracer(pid):
    """The PID of the process tracing process `pid` (/proc/PID/status TracerPid), or None: a process
    may have one tracer only."""
    ids = _status_ids(pid, "TracerPid")
    return ids[0] if ids and ids[0] else None


def maps_errno(pid):
    """The errno of opening /proc/PID/maps here (what a reader of the process's memory needs first), or None."""
    try:
        with open("/proc/%d/maps" % pid, "rb") as f:
            f.read(1)
        return None
    except OSError as exc:
        return exc.errno


# The calls a thread waits in, as no signal ends, until the child it made execs or exits: vfork, clone with
# CLONE_VFORK (posix_spawn), clone3 (whose flags are in memory: taken as such when the thread sleeps so).
CLONE_VFORK = 0x4000   # <linux/sched.h>
MAX_THREADS = 1 << 16  # threads whose state is read, at most


def in_vfork(pid):
    """[TID] of the threads of live process `pid` that wait for a vfork child (uninterruptibly, in one of the
    calls above): no ptrace stop reaches them, and gdb's attach waits for them until the child execs or exits."""
    out = []
    for tid in procfs.task_ids(pid)[:MAX_THREADS]:
        s = procfs.stat(pid, tid)
        call = procfs.thread_syscall(pid, tid) if s is not None and s["state"] == "D" else None
        name = NAMES.get(call[0]) if call is not None else None
        if name in ("vfork", "clone3") or (name == "clone" and call[1][0] & CLONE_VFORK):
            out.append(tid)
    return out


def not_read(pid, before, cause=None, exc=None):
    """(the first line, what to do) of why live process `pid` (procfs.stat `before` the read) was not read
    without stopping it: `cause`, how it exited meanwhile (process_problem), or that this user may
    not read it, or what the reader said (`exc`); None when it is there and no read failed."""
    from pyhang.render import failures
    from pyhang.render.target import reader_error_text
    if cause is not None:
        return cause, failures.no_process_hint(pid, namespaced_as(pid)) if before is None else None
    if exc is None:
        return None
    if maps_errno(pid) in (errno.EACCES, errno.EPERM):
        why = permission(pid)
        return (failures.no_permission(pid, why) if why else failures.cannot_read(pid, reader_error_text(exc)),
                failures.PTRACE_HINT)
    return failures.cannot_read(pid, reader_error_text(exc)), None


def not_stopped(pid, before, problem, error):
    """(the first line, what to do) of why pyhang could not stop live process `pid` (procfs.stat `before`
    the stop) itself: `problem` (live_kinds.StopProblem) and the errno `error` of the call that failed."""
    from pyhang.model.live_kinds import StopProblem
    from pyhang.render import failures
    if problem == StopProblem.NO_PROCESS:
        cause = process_problem(pid, before, failures.EXITED_DURING_STOP) or no_process(pid)
        return cause, failures.no_process_hint(pid, namespaced_as(pid)) if before is None else None
    if problem == StopProblem.NOT_PERMITTED:
        by = tracer(pid)
        if by:
            return failures.traced(pid, by, procfs.comm(by)), failures.traced_hint(pid)
        why = permission(pid)
        if why:
            return failures.no_permission(pid, why), failures.PTRACE_HINT
    return failures.cannot_stop(pid, os.strerror(error) if error else problem), \
        failures.PTRACE_HINT if problem == StopProblem.NOT_PERMITTED else None


def no_process(pid):
    from pyhang.render.failures import no_process as words
    return words(pid)


def process_problem(pid, before, during=None):
    """Why process `pid` cannot be attached to (or read: `during` says
    while what, render.failures), from /proc now and `before` (its
    procfs.stat before gdb started, None when there was none): it was never
    there, it exited meanwhile (its pid may be another process's now), or
    it is a zombie; None when it is there (the line: render.failures')."""
    from pyhang.render import failures
    during = during or failures.EXITED_DURING_ATTACH
    now = procfs.stat(pid)
    if before is None:
        return no_process(pid) if now is None else None
    was_zombie = before["state"] in ("Z", "X")
    if now is None or now["start_ticks"] != before["start_ticks"]:
        return failures.exited(pid, None if was_zombie else during)
    if now["state"] in ("Z", "X"):
        return failures.exited_a_zombie(pid, None if was_zombie else during, now["ppid"])
    return None

"""The words of `pyhang gcore`: the core written, what it kept, and why a
process of a tree got none; and of a core's record of /proc in a report."""
from pyhang.render.account import count as _count


def recorded_text(s):
    """What a record of /proc holds (a model.proc_record.ProcSummary)."""
    children = _count(len(s.children), "child process", "child processes") if s.children else "no child process"
    return "%s, the system calls of %s, %s" % (_count(s.fds, "fd"), _count(s.threads, "thread"), children)


def written_text(path, pid, pages, recorded):
    """One line: the core of process `pid` written to `path`, `pages` pages gdb's gcore had left as zeros
    read again, and the ProcSummary `recorded` of its record of /proc (None: none was added)."""
    again = ("; %s of memory gdb's gcore left as zeros (thread stacks behind a guard page) read again"
             % _count(pages, "page")) if pages else ""
    kept = "; /proc recorded in it: %s" % recorded_text(recorded) if recorded is not None else \
        "; no record of /proc"
    return "core of process %d written to %s%s%s" % (pid, path, again, kept)


def not_written_text(pid, why):
    """One line: process `pid` of a tree got no core, and why."""
    return "no core of process %d: %s" % (pid, why)


def cut_short_text(found):
    """Why a process is not stopped for its core: the transfers a stop would cut short
    ([(tid, call, fd, what)], pyhang.transfers.cut_short)."""
    tid, call, fd, what = found[0]
    return ("LWP %d is inside %s on fd %d (%s): the stop a core needs would cut the transfer short and the program "
            "could lose what it had not written yet (--stop makes the core anyway)" % (tid, call, fd, what))


# /proc/PID/stat's states (proc_pid_stat(5)).
_STATES = {"R": "running", "S": "sleeping", "D": "in an uninterruptible wait", "T": "stopped",
           "t": "stopped by a tracer", "X": "dead", "I": "idle", "P": "parked"}


def _exit_status(status):
    """A wait status as a person reads it: an exit code or the signal that ended it."""
    if status & 0x7f == 0:
        return "exited with status %d" % (status >> 8 & 0xff)
    return "killed by signal %d%s" % (status & 0x7f, ", core dumped" if status & 0x80 else "")


def _child(c):
    name = "PID %d (%s)" % (c.pid, c.comm or "?")
    if c.state == "Z":
        return "%s a zombie, not reaped yet%s" % (name, ": " + _exit_status(c.exit_status)
                                                  if isinstance(c.exit_status, int) else "")
    return "%s %s" % (name, _STATES.get(c.state, "in state %s" % c.state))


def report_lines(s):
    """The lines a text report gives of its core's record of /proc (ProcSummary `s`)."""
    lines = ["/proc as pyhang gcore recorded it with the core: %s" % recorded_text(s)]
    if s.children:
        lines.append("  children: " + "; ".join(_child(c) for c in s.children[:16]) +
                     ("; ..." if len(s.children) > 16 else ""))
    if s.environment:
        lines.append("  environment: " + " ".join("%s=%s" % kv for kv in sorted(s.environment.items())))
    return lines

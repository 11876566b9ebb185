"""The words of why a live process could not be read (pyhang.live_causes'
data): the first line the command line prints on stderr, and what to do."""

PTRACE_HINT = ("reading a process needs ptrace permission: run as the process's user or root, check "
               "/proc/sys/kernel/yama/ptrace_scope (1 lets only a parent attach: use sudo, or set it to 0), and in a "
               "container add --cap-add=SYS_PTRACE")


def no_process_hint(pid, namespaced):
    """What to do about a pid no process has (`namespaced`: live_causes.namespaced_as(pid))."""
    if namespaced:
        return ("no process has pid %d here, but %s: give the pid this machine sees, pyhang report -p %d" % (
            pid, ", ".join("PID %d is process %d of its PID namespace (a container)" % (h, pid) for h in namespaced[:4]),
            namespaced[0]))
    return "no process has pid %d now: it has exited, or the pid is wrong" % pid


def no_permission(pid, why):
    """The first line for a process this user may not read (`why`: live_causes.permission(pid))."""
    if "owner" in why:
        return "this user, %s, may not read process %d: it runs as %s" % (why["me"], pid, why["owner"])
    return ("this user may not read process %d: /proc/sys/kernel/yama/ptrace_scope is %d, which lets %s" % (
        pid, why["scope"], "only a parent or root read a process" if why["scope"] == 1 else
        "only root read a process" if why["scope"] == 2 else "no one read a process"))


def cannot_read(pid, what):
    """The first line for a process read without stopping it that could not be read, for a reason that is
    neither its exit nor permission (`what`: the reader's failure in words)."""
    return "cannot read process %d without stopping it: %s" % (pid, what)


# What each reader failure of a process read without stopping it means, by errno of /proc/PID/maps.
EXITED_DURING_READ = "while pyhang read it without stopping it"
EXITED_DURING_ATTACH = "while gdb was attaching to it"
EXITED_DURING_STOP = "while pyhang stopped it to read it"

def traced_hint(pid):
    """What to do about a process another tracer holds (traced)."""
    return ("detach that debugger (or end its trace) and run pyhang again, or read the process without "
            "stopping it: pyhang report --no-stop -p %d" % pid)


def traced(pid, tracer, name):
    """The first line for a process pyhang could not stop because process `tracer` (its comm `name`, or None)
    traces it: a process has one tracer at a time."""
    return "process %d is traced by process %d%s, and a process has one tracer at a time: pyhang cannot stop it" % (
        pid, tracer, " (%s)" % name if name else "")


def gdb_would_wait(pid, tids):
    """The first line for a process gdb is not started on: its threads `tids` wait for a vfork child, which no
    stop reaches, and gdb's attach would wait with them until the child execs or exits."""
    return ("gdb cannot stop process %d: thread%s %s wait%s in vfork for a child to exec or exit, where no stop "
            "reaches, and gdb's attach would wait for %s as long" % (
                pid, "s" if len(tids) > 1 else "", ", ".join("LWP %d" % t for t in tids), "" if len(tids) > 1 else "s",
                "them" if len(tids) > 1 else "it"))


def gdb_would_wait_hint(pid):
    return ("pyhang's own stop goes on without such a thread and reads its wait from /proc: pyhang report -p %d "
            "(without --gdb), or pyhang report --no-stop -p %d" % (pid, pid))


def cannot_stop(pid, what):
    """The first line for a process pyhang could not stop, for a reason that is neither its exit, another
    tracer nor permission (`what`: the error in words)."""
    return "cannot stop process %d: %s" % (pid, what)


def no_process(pid):
    return "there is no process %d" % pid


def exited(pid, during):
    """A process gone (`during`: while what, or None for one that was a zombie already)."""
    return "process %d has exited%s" % (pid, " " + during if during else "")


def exited_a_zombie(pid, during, parent):
    return ("process %d has exited%s: it is a zombie, which its parent (PID %d) has not reaped, and holds no "
            "threads or memory to read" % (pid, " " + during if during else "", parent))


def truncated_core(path, size, need, notes_lost):
    """A core cut short, which gdb refused: by how much, and, when the cut took its notes, what that lost."""
    said = "%s is a truncated core: %d bytes of the %d its headers describe (cut short while it was written or " \
           "copied)" % (path, size, need)
    if notes_lost:
        said += (", and the cut took its notes, which gdb's gcore writes last: every thread, its registers and the "
                 "mapped files are lost, so no thread of it can be read (a core the kernel or `pyhang gcore` "
                 "writes has its notes first, and keeps them when cut)")
    return said

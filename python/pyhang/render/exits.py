"""How a dead process ended (model.tree.ProcessExit), in a tree's JSON
and in words: its exit status, or the signal that killed it by name (of a
ProcessExit, or a server-died verdict's DeadServer, which carries the same).
And how a living one is exiting (ThreadReport.exiting)."""
import signal

from pyhang.model.kinds import ExitPath


def signal_text(number):
    """"signal 9 (SIGKILL)"."""
    name = signal_name(number)
    return "signal %d (%s)" % (number, name) if name else "signal %d" % number


def exit_text(e):
    """How a dead process ended (`e`: its ProcessExit, or a DeadServer): "killed by signal 9 (SIGKILL)",
    "exited with status 1"."""
    if e.signal is not None:
        return "killed by %s%s" % (signal_text(e.signal), ", core dumped" if e.core_dumped else "")
    if e.status is not None:
        return "exited with status %d" % e.status
    return "exited (how could not be read)"


def exit_json(e):
    """A zombie's "exit" in a pyhang-tree/1 document."""
    return {"wait_status": e.wait_status, "status": e.status, "signal": e.signal,
            "signal_name": signal_name(e.signal), "core_dumped": e.core_dumped}


def signal_name(number):
    """"SIGKILL" of 9 (Linux's numbers), or None."""
    try:
        return signal.Signals(number).name if number is not None else None
    except ValueError:
        return None


EXITING = {
    ExitPath.THREADING_SHUTDOWN: "%s runs threading._shutdown, which joins every non-daemon thread: the process "
                                 "ends only once they have ended",
    ExitPath.ATEXIT: "%s runs the interpreter's exit past threading._shutdown, the atexit callbacks "
                     "(multiprocessing's finalizers among them)%s: the process ends only once they return",
}


def exiting_text(th, name):
    """Why thread `th` (ThreadReport, its `exiting` set) keeps its process from ending; `name`: its name."""
    if th.exiting == ExitPath.ATEXIT:
        f = th.python_frames[-1] if th.python_frames else None
        called = ', here %s (File "%s", line %d)' % (f.function, f.file, f.line) if f else ""
        return EXITING[ExitPath.ATEXIT] % (name, called)
    return EXITING[th.exiting] % name

"""How a dead process ended (model.tree.ProcessExit), in a tree's JSON
and in words: its exit status, or the signal that killed it by name.  The
words are made from the JSON's facts (a verdict's facts carry the same)."""
import signal


def signal_text(number):
    """"signal 9 (SIGKILL)"."""
    name = signal_name(number)
    return "signal %d (%s)" % (number, name) if name else "signal %d" % number


def exit_text(e):
    """How a dead process ended (exit_json's facts): "killed by signal 9 (SIGKILL)", "exited with status 1"."""
    if e.get("signal") is not None:
        return "killed by %s%s" % (signal_text(e["signal"]), ", core dumped" if e.get("core_dumped") else "")
    if e.get("status") is not None:
        return "exited with status %d" % e["status"]
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

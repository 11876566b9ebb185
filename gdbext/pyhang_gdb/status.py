"""How the last pyhang command ended, for the `pyhang` command line (which
reads it after running a command in gdb): one JSON line behind a marker.
No gdb here."""
import json

MARKER = "@@PYHANG-STATUS@@"

_last = {"ran": False, "ok": None, "error": None, "deadlocks": None, "incomplete": None}


def started():
    _last.update(ran=True, ok=True, error=None, incomplete=None)


def failed(message):
    _last.update(ran=True, ok=False, error=message)


def deadlocks(count):
    _last["deadlocks"] = count


def incomplete(unread):
    """What a report could not read that it needs to rule a deadlock out
    (pyhang.analysis.completeness.incomplete); [] when nothing."""
    _last["incomplete"] = list(unread)


def line():
    """The marker and the status as one JSON object."""
    return "%s %s" % (MARKER, json.dumps(_last, separators=(",", ":")))

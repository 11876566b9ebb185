"""How the last pyhang command ended, for the `pyhang` command line (which
reads it after running a command in gdb): one JSON line behind a marker.
No gdb here."""
import json

MARKER = "@@PYHANG-STATUS@@"

_last = {"ran": False, "ok": None, "error": None, "deadlocks": None}


def started():
    _last.update(ran=True, ok=True, error=None)


def failed(message):
    _last.update(ran=True, ok=False, error=message)


def deadlocks(count):
    _last["deadlocks"] = count


def line():
    """The marker and the status as one JSON object."""
    return "%s %s" % (MARKER, json.dumps(_last, separators=(",", ":")))

"""What about a target or its interpreter could not be read or trusted, as
records: a target's warnings (a model.kinds.TargetWarning: the native target
reader's TargetIssue, a mapped file's problem, or a collector's own) and the
interpreter reader's (a model.kinds.StateWarning: the native StateWarning).
The native module makes them (python/records.hpp); a collector adds its
own; the report keeps both in one list (Report.warnings), worded by
render.target and render.interpreter.

A snapshot keeps them as data with only the fields a warning fills
(`__optional__`); `warning_of` makes the record of such data again, by its
kind's vocabulary."""
from __future__ import annotations

from pyhang.model.kinds import StateWarning
from pyhang.model.record import field, from_data, record
from pyhang.model.unread import ReadProblem

__all__ = ["TargetIssue", "FieldChange", "StateIssue", "warning_of", "warnings_of"]


def _leave_out(cls, names):
    """Makes to_data() leave out each of `names` of record `cls` while it holds its default (the record's
    `__optional__`, set once its defaults are known)."""
    blank = cls(kind="")
    cls.__optional__ = {name: (lambda n, d: lambda r: getattr(r, n) == d)(name, getattr(blank, name))
                        for name in names}
    cls.__record_omit__ = tuple(cls.__optional__.items())


@record
class TargetIssue:
    """What about the target could not be read or trusted (model.kinds.TargetWarning `kind`: its comments
    say which fields each kind fills)."""
    kind: str
    path: str = ""                    # the file it is about (the core, a mapped file, the executable)
    number: int = 0                   # a count, a pid, an errno
    other: int = 0                    # a second number (a total, the core's pid)
    text: str = ""                    # a reader failure's name, a build-id, what was wrong
    other_text: str = ""              # a second text (the file it names, the core's build-id, a schema)
    given: str = ""                   # other-executable: gdb's executable; proc-record-other-version: who wrote it
    tid: int = 0                      # not-stopped-for-transfer: the LWP inside the transfer ...
    call: str = ""                    # ... its system call
    fd: int = 0                       # ... the file descriptor
    what: str = ""                    # ... and what that descriptor is
    tids: list[int] = field(default_factory=list)   # zeroed-stacks: the threads whose stacks are zeros
    problem: ReadProblem | None = None   # threading-/asyncio-incomplete: what could not be read

    __nested__ = {"problem": ReadProblem}


@record
class FieldChange:
    """One field of a target's own layout description that differs from pyhang's row."""
    name: str
    was: int = 0
    now: int = 0


@record
class StateIssue:
    """What about the interpreter's state could not be read or trusted (model.kinds.StateWarning `kind`:
    the native StateWarning; render.interpreter says which fields each kind fills)."""
    kind: str
    address: int = 0
    other: int = 0
    expected: int = 0
    number: int = 0
    count: int = 0
    text: str = ""
    text2: str = ""
    text3: str = ""
    notes: list[ReadProblem] = field(default_factory=list)   # gil-statics-undecoded: what the decoder found wrong
    changes: list[FieldChange] = field(default_factory=list)   # asyncio-debug-differ: each field that differs

    __nested__ = {"notes": ReadProblem, "changes": FieldChange}


# Data leaves out what a warning does not fill (most target warnings fill one or two fields; an interpreter
# warning's notes and changes are its kind's alone).
_leave_out(TargetIssue, TargetIssue.__record_fields__[1:])
_leave_out(StateIssue, ("notes", "changes"))

_STATE_KINDS = frozenset(v for k, v in vars(StateWarning).items() if k.isupper() and isinstance(v, str))


def warning_of(data):
    """The record of one warning: a record as it is; data (a snapshot's) as its kind's record (an
    interpreter warning's kind is a StateWarning; any other a target's: a kind another pyhang wrote
    is kept with the fields this one knows)."""
    if not isinstance(data, dict):
        return data
    return from_data(StateIssue if data.get("kind") in _STATE_KINDS else TargetIssue,
                     dict(data, kind=str(data.get("kind") or "")))


def warnings_of(items):
    """warning_of of each of `items`."""
    return [warning_of(w) for w in items or ()]

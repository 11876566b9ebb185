"""Python values read from a process, as records: the answers to the
`attributes` question (an object's attributes, native
PythonLocks.attributes) and the `frame_locals` question (a frame's locals,
native PythonValues.frame_locals) of pyhang.model.facts, made by the native
module itself (python/records.hpp); a snapshot keeps them as data
(`to_data`, back with `from_data`).  The analysis (pyhang.analysis.gather,
.python_api, .collectives) reads their fields."""
from __future__ import annotations

from pyhang.model.record import field, from_data, record
from pyhang.model.unread import ReadProblem

__all__ = ["ObjectValue", "LocalValue", "FrameLocals", "attributes_of"]


@record
class ObjectValue:
    """An attribute's value, decoded (native cpython::PyValue; python_value() gives one too)."""
    address: int = 0
    type: str | None = None
    kind: str = ""                    # "int", "str", "bool", "float", "list", ... (the native ValueKind name table)
    boolean: bool | None = None
    integer: int | None = None
    real: float | None = None
    text: str | None = None
    length: int | None = None         # a container's length
    problem: ReadProblem | None = None   # why it could not be decoded; None: it was

    __nested__ = {"problem": ReadProblem}


@record
class LocalValue:
    """One local of a frame, as text (native cpython::FrameLocal and RenderedValue); a value rendered alone
    (PythonValues.render: py-print's global or builtin) has no name or kind."""
    name: str = ""
    kind: str = ""                    # model.kinds.LocalKind: "argument", "local", "cell", "free", "f_locals"
    address: int | None = None
    type: str | None = None
    repr: str | None = None
    complete: bool = False            # the repr is whole (not cut at a limit)
    problem: ReadProblem | None = None   # the first thing that could not be read; None: all was

    __nested__ = {"problem": ReadProblem}


@record
class FrameLocals:
    """A frame's locals and its namespaces (native cpython::FrameLocals)."""
    locals: list[LocalValue] = field(default_factory=list)
    f_locals: int | None = None       # the frame's f_locals dict, when it has one
    globals: int | None = None
    builtins: int | None = None
    problem: ReadProblem | None = None   # why its locals could not all be read; None: they could

    __nested__ = {"locals": LocalValue, "problem": ReadProblem}


def attributes_of(data):
    """{name: ObjectValue or None} of one object's attributes, from their data (a snapshot's: native
    PythonLocks.attributes gives the records themselves)."""
    return None if data is None else {name: from_data(ObjectValue, v) for name, v in data.items()}

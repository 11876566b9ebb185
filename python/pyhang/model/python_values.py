"""Python values read from a process, as records: the answers to the
`attributes` question (an object's attributes, native
PythonLocks.attributes) and the `frame_locals` question (a frame's locals,
native PythonValues.frame_locals) of pyhang.model.facts, made once at the
collector (`from_data`); a snapshot keeps them as data (`to_data`).  The
analysis (pyhang.analysis.gather, .python_api, .collectives) reads their
fields.  A `problem` is kept as the native reader gives it."""
from __future__ import annotations

from pyhang.model.record import field, from_data, record

__all__ = ["ObjectValue", "LocalValue", "FrameLocals", "attributes_of"]


@record
class ObjectValue:
    """An attribute's value, decoded (native cpython::PyValue)."""
    address: int = 0
    type: str | None = None
    kind: str = ""                    # "int", "str", "bool", "float", "list", ... (native PyValueKind)
    boolean: bool | None = None
    integer: int | None = None
    real: float | None = None
    text: str | None = None
    length: int | None = None         # a container's length
    problem: object = None            # why it could not be decoded; None: it was


@record
class LocalValue:
    """One local of a frame, as text (native cpython::FrameLocal and RenderedValue)."""
    name: str = ""
    kind: str = ""                    # model.kinds.LocalKind: "argument", "local", "cell", "free", "f_locals"
    address: int | None = None
    type: str | None = None
    repr: str | None = None
    complete: bool = False            # the repr is whole (not cut at a limit)
    problem: object = None


@record
class FrameLocals:
    """A frame's locals and its namespaces (native cpython::FrameLocals)."""
    locals: list[LocalValue] = field(default_factory=list)
    f_locals: int | None = None       # the frame's f_locals dict, when it has one
    globals: int | None = None
    builtins: int | None = None
    problem: object = None            # why its locals could not all be read; None: they could

    __nested__ = {"locals": LocalValue}


def attributes_of(data):
    """{name: ObjectValue or None} of one object's attributes (native PythonLocks.attributes, or its data)."""
    return None if data is None else {name: from_data(ObjectValue, v) for name, v in data.items()}

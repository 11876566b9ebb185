"""What a CPython object or frame reader could not read, as a record: the
native ReadProblem (pyhang/cpython/unread.hpp) that the `python`,
`frame_locals`, `python_locks`, `asyncio`, `threading` and fork answers carry
in their problem fields.

`path` is the chain of things that led to what could not be read, outermost
first (a frame, its code object, the code's field "name", the str it
points to), each a ReadStep whose `part` is a model.kinds.ReadPart; `why`
(a model.kinds.ReadWhy) says what was wrong with the last one, with the
number, limit, address (`at`) or name it needs; `count`, when more than
one, how many problems like it were counted.  render.unread words it.
"""
from __future__ import annotations

from pyhang.model.kinds import ReadWhy
from pyhang.model.record import field, from_data, record, to_data

__all__ = ["ReadStep", "ReadProblem", "not_collected", "read_problem", "from_data", "to_data"]


@record(frozen=True)
class ReadStep:
    """One thing on the way to what could not be read."""
    part: str                 # model.kinds.ReadPart
    address: int = 0          # 0: none (a field, a module by name)
    name: str = ""            # a field, key, variable, module or attribute name
    number: int = 0           # an LWP (a thread, a thread's task list), an interpreter (its task list)


@record
class ReadProblem:
    """What could not be read (`path`, outermost first) and why (native ReadProblem)."""
    path: list[ReadStep] = field(default_factory=list)
    why: str = ""             # model.kinds.ReadWhy
    number: int | None = None # the value that is implausible, invalid, too many digits...
    limit: int = 0            # the bound that was passed (reads, links, digits)
    at: int = 0               # where a chain loops, where the read limit was reached, a futex, an owner
    name: str = ""            # a key, a version, a type, a field
    count: int = 0            # how many problems like it in all, when more than one was counted

    __nested__ = {"path": ReadStep}


def not_collected():
    """The problem of an answer a collector did not give at all (a replayed snapshot without it): the
    analysis's own (a frame's locals, a fork child's large containers)."""
    return ReadProblem(why=ReadWhy.NOT_COLLECTED)


def read_problem(data):
    """The record of a problem field as the native module or a snapshot gives it: None, a ReadProblem
    already, or its data."""
    if data is None or isinstance(data, ReadProblem):
        return data
    return from_data(ReadProblem, data)

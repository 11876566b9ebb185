"""Which threads and which variables reach objects, as records: the answers to
the `references` and `object_names` questions (pyhang.model.facts), made by
native PythonLocks.thread_references() and .object_names() themselves
(python/records.hpp); a snapshot keeps them as data (`to_data`, back with
`from_data`).  The analysis reads their fields (pyhang.analysis.gather), the
renderer words a path (pyhang.render.names.object_name)."""
from __future__ import annotations

from pyhang.model.record import field, record

__all__ = ["ThreadReferences", "ObjectPath"]


@record
class ThreadReferences:
    """The threads whose Python frames reach each object asked about (a
    local, or an attribute of an instance a local refers to)."""
    by_object: list[list] = field(default_factory=list)   # [[address, [tid]]] by address; one only reached
    complete: bool = False            # False: some frames were not read


@record(frozen=True)
class ObjectPath:
    """The variable that reaches an object (native cpython::ObjectPath): a
    module global (`module`.`variable`[.`attribute`]), or an attribute of an
    instance a frame's local refers to."""
    module: str | None = None         # None for a local
    variable: str = ""
    attribute: str | None = None
    owner_type: str | None = None     # the instance's type, for a local's attribute
    owner: int | None = None          # ... the instance
    tid: int | None = None            # the thread whose frame holds the local
    function: str | None = None       # ... and that frame's function

"""Which threads reach objects, as a record: the answer to the `references`
question (pyhang.model.facts), made once at the collector from native
PythonLocks.thread_references() (`from_data`); a snapshot keeps it as data
(`to_data`).  The analysis reads its fields (pyhang.analysis.gather)."""
from __future__ import annotations

from pyhang.model.record import field, record

__all__ = ["ThreadReferences"]


@record
class ThreadReferences:
    """The threads whose Python frames reach each object asked about (a
    local, or an attribute of an instance a local refers to)."""
    by_object: list[list] = field(default_factory=list)   # [[address, [tid]]] by address; one only reached
    complete: bool = False            # False: some frames were not read

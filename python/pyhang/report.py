"""The report model: what pyhang found about every thread of one target.

Its JSON form is the contract of DESIGN.md, schema "pyhang-report/1": keys
may be added, never renamed.  Parts that a command did not compute keep
their empty value (null, [] or "unknown"), so scripts can rely on the keys.
"""
from dataclasses import dataclass, field
from typing import List, Optional

from pyhang import SCHEMA


@dataclass
class NativeFrame:
    pc: int
    function: Optional[str] = None  # from ELF symbols; None when none covers pc
    library: Optional[str] = None   # path of the mapped object
    offset: int = 0                 # pc - function start


@dataclass
class PythonFrame:
    function: str
    file: str
    line: int


@dataclass
class BlockedOn:
    kind: str
    address: Optional[int] = None
    library: Optional[str] = None
    owners: List[int] = field(default_factory=list)
    owner_source: str = "unknown"
    owner_alive: Optional[bool] = None
    detail: str = ""
    confidence: Optional[str] = None    # "certain" | "likely" | "guess": how sure the lock identification is
    evidence: Optional[str] = None      # how it was identified
    lock: dict = field(default_factory=dict)     # the decoded lock's fields
    condvar_mutex: Optional[int] = None


@dataclass
class ThreadReport:
    tid: int
    gdb_num: int
    name: Optional[str] = None
    gil: str = "unknown"
    python_frames: List[PythonFrame] = field(default_factory=list)
    native_frames: List[NativeFrame] = field(default_factory=list)
    blocked_on: Optional[BlockedOn] = None
    problem: Optional[str] = None  # why something about this thread could not be read


@dataclass
class TargetInfo:
    kind: str                        # "live", "core", "callback"
    pid: Optional[int] = None
    core: Optional[str] = None
    executable: Optional[str] = None
    python_version: Optional[str] = None


@dataclass
class GilSummary:
    locked: Optional[bool] = None
    holder_tid: Optional[int] = None
    waiters: List[int] = field(default_factory=list)


@dataclass
class Report:
    target: TargetInfo
    threads: List[ThreadReport] = field(default_factory=list)
    gil: GilSummary = field(default_factory=GilSummary)
    deadlocks: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    fork_hazards: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)   # blocked without a cycle: {kind, threads, text}
    fork_analysis: Optional[dict] = None           # fork-hazards' full evidence (not in the JSON contract)
    warnings: List[str] = field(default_factory=list)


def _blocked_json(b):
    if b is None:
        return None
    return {"kind": b.kind, "address": b.address, "library": b.library, "owners": list(b.owners),
            "owner_source": b.owner_source, "owner_alive": b.owner_alive, "detail": b.detail,
            "confidence": b.confidence, "evidence": b.evidence}


def to_json(report: Report) -> dict:
    t = report.target
    return {
        "schema": SCHEMA,
        "target": {"kind": t.kind, "pid": t.pid, "core": t.core, "executable": t.executable,
                   "python_version": t.python_version},
        "threads": [{
            "tid": th.tid,
            "gdb_num": th.gdb_num,
            "name": th.name,
            "gil": th.gil,
            "python_frames": [{"function": f.function, "file": f.file, "line": f.line}
                              for f in th.python_frames],
            "native_frames": [{"function": f.function, "library": f.library, "pc": f.pc, "offset": f.offset}
                              for f in th.native_frames],
            "blocked_on": _blocked_json(th.blocked_on),
            "problem": th.problem,
        } for th in report.threads],
        "gil": {"locked": report.gil.locked, "holder_tid": report.gil.holder_tid,
                "waiters": list(report.gil.waiters)},
        "deadlocks": report.deadlocks,
        "edges": report.edges,
        "fork_hazards": report.fork_hazards,
        "verdicts": report.verdicts,
        "warnings": list(report.warnings),
    }

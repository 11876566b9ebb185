"""The facts pyhang works with, as plain records (model.record).

- `snapshot`: what was collected from one target (threads, registers,
  native frames, the decoded CPython state, lock facts, fork facts).  No gdb
  object and no target memory in it; what is saved as JSON and analysed
  again anywhere is the collector's answers it was assembled from
  (`facts`: a Recording, replayed).
- `report`: what the analysis concluded (threads with what each waits on,
  deadlocks, verdicts, fork hazards).  The JSON contract is derived from it
  (pyhang.render.json; docs/json-contract.md).
- `kinds`: the fixed vocabularies (GIL states, confidences, owner sources).
"""
from pyhang.model.kinds import Confidence, GilState, OwnerSource  # noqa: F401
from pyhang.model.report import (BlockedOn, Deadlock, Edge, GilSummary, NativeFrame, PythonFrame,  # noqa: F401
                                 Report, TargetInfo, ThreadReport, Verdict)
from pyhang.model.snapshot import ProcessSnapshot, ThreadSnapshot  # noqa: F401

"""The analysis: from snapshots (pyhang.model.snapshot) to reports
(pyhang.model.report).  Plain Python over plain data: no gdb, no target
and no native module, so that any Python 3 analyses a saved snapshot."""
from pyhang.analysis.report import build_report, conclude, frames_wanted, threads  # noqa: F401

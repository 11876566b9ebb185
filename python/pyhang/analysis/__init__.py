"""The analysis: from snapshots (pyhang.model.snapshot) to reports
(pyhang.model.report).  Plain Python over plain data, with the native
module only for the wait-for graph search; no gdb and no target."""
from pyhang.analysis.report import build_report, conclude, frames_wanted, threads  # noqa: F401

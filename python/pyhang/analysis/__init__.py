"""The analysis: it asks a collector for the facts of a target
(pyhang.model.facts) and makes its report (pyhang.model.report).  Plain
Python over plain data; no gdb and no target."""
from pyhang.analysis.report import analyse, build_report, conclude, frames_wanted, from_snapshot, threads  # noqa: F401

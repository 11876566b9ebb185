"""The analysis: it asks a collector for the facts of a target
(pyhang.model.facts) and makes its report (pyhang.model.report).  Plain
Python over plain data: no gdb, no target and no native module, so that any
Python 3 analyses a saved snapshot."""
from pyhang.analysis.report import analyse, build_report, conclude, frames_wanted, from_snapshot, threads  # noqa: F401

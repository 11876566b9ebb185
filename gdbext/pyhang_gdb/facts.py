"""gdb's answers to the analysis's questions (pyhang.model.facts.Facts):
the selected inferior, stopped, read through gdb and the native decoders.

The one collector (pyhang.native_facts.Collector) built from gdb's parts:
the threads and the target are gdb's; the decoders are the ones kept for
the stop and shared with pyhang's other commands (pyhang_gdb.decoders), so
a question asked twice costs nothing the second time and a Recording of
this collector is what the target said.
"""
import gdb

from pyhang.analysis.report import analyse
from pyhang.native_facts import Collector
from pyhang.thread_commands import Analysed
from pyhang_gdb import collect, decoders
from pyhang_gdb.session import SESSION, core_path


def gdb_threads(collector, depth, tids):
    """The threads as gdb lists them, their pcs named by the stop's decoders (collect.thread_raws)."""
    return [collect.thread_facts(r) for r in collect.thread_raws(depth, tids)]


def gdb_target(collector):
    """The TargetFacts of gdb's inferior (collect.target_fields) and what about it gdb found wrong."""
    target = collector.native_target
    return collector.target_facts(**collect.target_fields(target), warnings=collect.target_warnings(target))


def _sysroot():
    try:
        return gdb.parameter("sysroot")
    except gdb.error:
        return None


def gdb_facts():
    """The collector of gdb's selected inferior at this stop."""
    target = SESSION.target()
    core = target.kind == "core"
    return Collector(target, gdb_threads, gdb_target, host_tid=lambda tid: collect.target_tids().to_host(tid),
                     process_id=None if core else target.pid or gdb.selected_inferior().pid,
                     decoders=decoders.stop_decoders(), core=core_path() if core else None,
                     sysroot=_sysroot())


def facts():
    """The collector of this stop (made once per stop)."""
    return SESSION.cached("facts", gdb_facts)


def report(native_depth=None, fork_facts=True, locals=False):
    """(ProcessSnapshot, Report) of the selected inferior (analysis.report.analyse)."""
    return analyse(facts(), native_depth=native_depth, fork_facts=fork_facts, locals=locals)


def analysed():
    """The analysis `py-bt`, `lock-owner`, `gil-holder`, `fork-hazards` and
    `py-tasks` word (pyhang.thread_commands.Analysed): the one the command
    line makes for them (analyse's defaults), made once per stop, so
    `thread apply all lock-owner` analyses the process once."""
    return SESSION.cached("analysed", lambda: Analysed(*report()))

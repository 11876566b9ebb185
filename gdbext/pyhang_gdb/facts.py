"""gdb's answers to the analysis's questions (pyhang.model.facts.Facts):
the selected inferior, stopped, read through gdb and the native decoders.

The threads and the target are gdb's; everything else the native decoders
answer (pyhang.native_facts), made once per stop and shared with pyhang's
other commands (pyhang_gdb.decoders), so a question asked twice costs
nothing the second time and a Recording of this collector is what the
target said.
"""
import gdb

from pyhang.analysis import locks
from pyhang.analysis.report import analyse
from pyhang.model.facts import ThreadFacts
from pyhang.native_facts import NativeFacts
from pyhang.thread_commands import Analysed
from pyhang_gdb import collect, decoders
from pyhang_gdb.session import SESSION, core_path


class GdbFacts(NativeFacts):
    """The facts of gdb's selected inferior at this stop."""

    def __init__(self):
        super().__init__(SESSION.target())

    def interpreter(self):
        return decoders.interpreter()

    def lock_reader(self):
        return decoders.lock_reader()

    def python_locks_decoder(self):
        return decoders.python_locks()

    def python_values(self):
        return decoders.python_values()

    def python(self):
        return decoders.python_state()

    def host_tid(self, tid):
        return collect.target_tids().to_host(tid)

    def target(self):
        target = self.native_target
        info = collect.target_info(target)
        return self.target_facts(kind=info.kind, pid=info.pid, core=info.core, executable=info.executable,
                                 namespace_pid=info.namespace_pid, parent_pid=info.parent_pid,
                                 warnings=collect.target_warnings(target))

    def _threads(self, depth, tids):
        target = self.native_target
        out = [ThreadFacts(num=r.num, tid=r.tid, name=r.name, registers=r.registers,
                           frames=collect.native_frames(target, r.pcs), problem=r.problem, unwound_by=r.unwound_by,
                           host_tid=r.host_tid)
               for r in collect.thread_raws(depth, tids)]
        if tids is None:
            # Each thread's struct pthread (fs_base) is known now: joins and fork
            # facts need not switch to every thread again.
            SESSION.cached("thread-bases", lambda: locks.thread_bases(out))
        return out

    def process_id(self):
        if self.native_target.kind == "core":
            return None
        return self.native_target.pid or gdb.selected_inferior().pid

    def core_file(self):
        return core_path()

    def sysroot(self):
        try:
            return gdb.parameter("sysroot")
        except gdb.error:
            return None


def facts():
    """The collector of this stop (made once per stop)."""
    return SESSION.cached("facts", GdbFacts)


def report(native_depth=None, fork_facts=True, locals=False):
    """(ProcessSnapshot, Report) of the selected inferior (analysis.report.analyse)."""
    return analyse(facts(), native_depth=native_depth, fork_facts=fork_facts, locals=locals)


def analysed():
    """The analysis `py-bt`, `lock-owner`, `gil-holder`, `fork-hazards` and
    `py-tasks` word (pyhang.thread_commands.Analysed): the one the command
    line makes for them (analyse's defaults), made once per stop, so
    `thread apply all lock-owner` analyses the process once."""
    return SESSION.cached("analysed", lambda: Analysed(*report()))

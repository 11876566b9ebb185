"""gdb's answers to the analysis's questions (pyhang.model.facts.Facts):
the selected inferior, stopped, read through gdb and the native decoders.

Each answer is made when asked and kept for the stop (SESSION.cached and the
decoders' own caches), so a question asked twice costs nothing the second
time and a Recording of this collector is what the target said.
"""
import time

import gdb

import _pyhang_native as native

from pyhang import procfs
from pyhang.analysis import locks
from pyhang.analysis.report import analyse
from pyhang.model.facts import Facts, ThreadFacts
from pyhang_gdb import collect, decoders
from pyhang_gdb.session import SESSION

# The native readers of a system call's arguments in target memory, by the
# names pyhang.analysis.syscalls.memory_wanted gives them.
_SYSCALL_READERS = {"pollfds": native.read_pollfds, "fd_set": native.read_fd_set,
                    "timespec": native.read_timespec, "timeval": native.read_timeval}


def _clock_now(clock):
    try:
        return time.clock_gettime_ns(clock)
    except (OSError, ValueError, OverflowError):
        return None


class GdbFacts(Facts):
    """The facts of gdb's selected inferior at this stop."""

    def __init__(self):
        self.stop = decoders.Stop()
        self.by_tid = {}   # TID → the ThreadFacts `threads` last gave
        self.made = {}     # (depth, tids) → what `threads` gave

    def target(self):
        target = self.stop.target
        info = collect.target_info(target)
        return {"kind": info.kind, "pid": info.pid, "core": info.core, "executable": info.executable,
                "namespace_pid": info.namespace_pid, "parent_pid": info.parent_pid,
                "warnings": collect.target_warnings(target), "lock_problem": self.stop.lock_reader.problem or None}

    def python(self):
        return decoders.python_state()

    def threads(self, depth, tids=None):
        key = (depth, None if tids is None else tuple(sorted(tids)))
        if key not in self.made:
            self.made[key] = self._threads(depth, tids)
        self.by_tid.update((t.tid, t) for t in self.made[key])
        return self.made[key]

    def _threads(self, depth, tids):
        target = self.stop.target
        out = [ThreadFacts(num=r.num, tid=r.tid, name=r.name, registers=r.registers,
                           frames=collect.native_frames(target, r.pcs), problem=r.problem, unwound_by=r.unwound_by,
                           host_tid=r.host_tid)
               for r in collect.thread_raws(depth, tids)]
        if tids is None:
            # Each thread's struct pthread (fs_base) is known now: joins and fork
            # facts need not switch to every thread again.
            SESSION.cached("thread-bases", lambda: locks.thread_bases(out))
        return out

    def locks(self, tids):
        return [[tid, self._lock(tid)] for tid in tids]

    def _lock(self, tid):
        t = self.by_tid.get(tid)
        if t is None:
            return {}
        frames = [{"pc": f.pc, "function": f.function, "library": f.library} for f in t.frames]
        identified = dict(self.stop.lock_reader.identify(tid, t.registers, frames))
        address = identified.get("address")
        if identified.get("kind"):
            identified["library"] = self.stop.target.symbolize([address])[0][1] if address else None
        return identified

    def python_locks(self, waits):
        return [self.stop.python_locks.wait(tid, futex) for tid, futex in waits]

    def words(self, addresses):
        out = []
        for address in addresses:
            data = self.stop.target.read(address, 4)
            out.append(int.from_bytes(data, "little") if data is not None else None)
        return out

    def frame_selves(self, tids):
        return [[tid, self.stop.python_locks.frame_selves(tid)] for tid in tids]

    def attributes(self, requests):
        return [self.stop.python_locks.attributes(address, list(names)) for address, names in requests]

    def syscall_memory(self, requests):
        return [_SYSCALL_READERS[reader](self.stop.target, *args) for reader, args in requests]

    def clock_now(self, clock):
        return SESSION.cached("clock-%d" % clock, lambda: _clock_now(clock))

    def proc_syscalls(self, tids):
        target = self.stop.target
        if target.kind == "core" or not target.pid:
            return [None] * len(tids)
        calls = [procfs.thread_syscall(target.pid, collect.target_tids().to_host(tid)) for tid in tids]
        return [call[0] if call else None for call in calls]

    def files(self, fds):
        target = self.stop.target
        pid = target.pid or gdb.selected_inferior().pid
        if target.kind == "core" or not pid:
            return None
        return sorted(procfs.files(pid, sorted(fds)).items())

    def object_names(self, addresses):
        return sorted(self.stop.python_locks.object_names(sorted(addresses)).items())

    def references(self, addresses):
        refs = self.stop.python_locks.thread_references(sorted(addresses))
        return {"by_object": sorted(refs["by_object"].items()), "complete": refs["complete"]}

    def frame_locals(self, frames):
        values = decoders.python_values()
        return [values.frame_locals(frame, code) for frame, code in frames]

    def threading(self):
        return decoders.threading()

    def asyncio(self):
        return decoders.asyncio()

    def fork_facts(self, bases):
        return decoders.fork_facts(bases)

    def fork_containers(self):
        return decoders.fork_containers()

    def lock_objects(self, addresses):
        return collect.lock_objects(addresses)


def facts():
    """The collector of this stop (made once per stop)."""
    return SESSION.cached("facts", GdbFacts)


def report(native_depth=None, fork_facts=True, locals=False):
    """(ProcessSnapshot, Report) of the selected inferior (analysis.report.analyse)."""
    return analyse(facts(), native_depth=native_depth, fork_facts=fork_facts, locals=locals)

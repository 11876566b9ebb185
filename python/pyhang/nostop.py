"""The facts of a live process read without stopping it: no ptrace, no gdb,
nothing the process does is interrupted (a stop can cut a write on a pipe
short, and the program loses what it had not written yet).

- Threads from /proc/PID/task; a thread parked in a system call gives its
  call, six arguments, stack pointer and pc from /proc/PID/task/TID/syscall
  (native parked_registers), its struct pthread from glibc's own thread
  lists (native thread_descriptors) as fs_base.
- Native frames unwound by pyhang's unwinder from that stack pointer and pc
  only: a frame whose rule needs a register the kernel does not record
  (rbp in code built with frame pointers) ends the stack there, said as a
  problem of that thread.
- A thread that runs has no registers to give: it is listed as running,
  with its Python frames as far as they could be read.
- Memory through process_vm_readv (native Target.live).  The interpreter's
  state is read twice; a thread whose Python frames differ between the two
  reads was running, and its frames are a problem on that thread, never a
  fact presented as certain.  Who holds the GIL is kept only when both reads
  agree.  Each thread's system-call record is read before and after the
  interpreter: a thread whose record changed was running, and is listed as
  running (what it seemed to wait on was a moment, not a wait).
"""
import os

import _pyhang_native as native

from pyhang import namespaces, procfs
from pyhang.checkout import debug_directories
from pyhang.model.facts import ThreadFacts
from pyhang.model.kinds import PythonStatus, TargetWarning, ThreadIssueKind
from pyhang.model.live_kinds import ParkState
from pyhang.model.report import ThreadIssue
from pyhang.model.warning_facts import TargetIssue
from pyhang.model.waits import ParkedRegisters
from pyhang.native_facts import Collector, live_target, stack_runs, thread_bases, unwound

MAX_THREADS = 1 << 16


# What every report taken this way warns of first, and what it warns of
# when the GIL moved between two reads (worded by render.target).
GIL_MOVED = TargetIssue(TargetWarning.GIL_MOVED)
NOT_STOPPED = TargetIssue(TargetWarning.NOT_STOPPED)


class ProcThreads:
    """The parts of a collector of live process `pid` read while it runs: its threads from /proc
    (`threads`), its target (`target`), its interpreter read twice (`python`), its TIDs as the host
    knows them (`host_tid`)."""

    def __init__(self, pid, because=()):
        """`because`: the transfers a stop would have cut short
        (pyhang.transfers.cut_short), when that is why it is not stopped."""
        self.pid = pid
        self.because = list(because)
        self.tids_map = namespaces.live_tids(pid)
        self.moving = {}   # host TID → why its Python frames cannot be trusted (a ThreadIssue)

    def host_tid(self, tid):
        return self.tids_map.to_host(tid)

    def target(self, facts):
        return live_target(facts, self.pid, self.tids_map, [NOT_STOPPED] + [_cut_short(c) for c in self.because])

    def python(self, facts):
        """The interpreter's state, read twice: threads whose frames moved
        between the reads keep the first read, and are marked.  Every
        thread's system-call record is read first (_records): the threads
        read again after it (threads) and found changed were running."""
        facts.once("records", lambda: self._records(facts))
        first = facts.interpreter().state()
        if first.status != PythonStatus.OK:
            return first
        facts.native_target.invalidate()
        moves = native.state_moves(facts.interpreter(), native.Interpreter(facts.native_target, digest_frames=True))
        for tid in moves.moved:
            self.moving[self.host_tid(tid)] = ThreadIssue(ThreadIssueKind.FRAMES_MOVED)
        if moves.gil_moved:
            # The GIL changed hands between the reads: who holds it is not known.
            for g in first.gils:
                g.locked, g.holder_tstate = None, None
            for t in first.threads:
                t.holds_gil = False
            first.warnings.append(GIL_MOVED)
        return first

    def _records(self, facts):
        """([(number, host TID)], {host TID: its system-call record}): the
        threads /proc lists, the main thread first as a debugger numbers
        them."""
        try:
            listed = sorted(int(t) for t in os.listdir("/proc/%d/task" % self.pid))[:MAX_THREADS]
        except OSError:
            listed = []
        listed.sort(key=lambda t: (t != self.pid, t))
        numbered = list(enumerate(listed, 1))
        return numbered, {host: native.parked_registers(facts.native_target, host) for _, host in numbered}

    def threads(self, facts, depth, tids):
        facts.python()  # the records, then the interpreter: a thread parked throughout has the same record again
        numbered, before = facts.once("records", lambda: self._records(facts))
        wanted = None if tids is None else {self.host_tid(t) for t in tids}
        listed = [(num, host) for num, host in numbered if wanted is None or host in wanted]
        bases, _ = thread_bases(facts, self.host_tid)
        out = []
        for part in stack_runs(facts.native_target, listed, lambda item: _registers(before[item[1]])):
            for num, host in part:
                parked = native.parked_registers(facts.native_target, host)
                if parked != before[host] and (parked.state if parked else None) != ParkState.GONE:
                    parked = ParkedRegisters(ParkState.RUNNING)
                t = self._thread(facts, num, host, depth, parked, bases.get(host))
                if t is not None:
                    out.append(t)
        return out

    def _thread(self, facts, num, host, depth, parked, base):
        state = parked.state if parked else None
        if state == ParkState.GONE:
            return None
        own = self.tids_map.to_target(host)
        name = procfs.thread_name(self.pid, host)
        t = ThreadFacts(num=num, tid=own, name=name, unwound_by="pyhang",
                        host_tid=host if own != host else None)
        problems = []
        if state in (ParkState.IN_CALL, ParkState.BLOCKED):
            t.registers = dict(parked.registers)
            if base is not None:  # the thread's struct pthread, as a debugger gives it
                t.registers["fs_base"] = base
            t.frames, cut = unwound(facts, t.registers, depth)
            problems += cut
        elif state == ParkState.RUNNING:
            problems.append(ThreadIssue(ThreadIssueKind.RUNNING))
            if base is not None:  # its struct pthread still tells joins and fork facts which thread it is
                t.registers = {"fs_base": base}
        else:
            problems.append(ThreadIssue(ThreadIssueKind.NO_SYSCALL_RECORD, text=state or ""))
        if host in self.moving:
            problems.append(self.moving[host])
        t.problem = problems or None
        return t


def _registers(parked):
    """The registers a thread's system-call record gives, or None."""
    return parked.registers if parked else None


def no_stop_facts(pid, because=()):
    """The collector of live process `pid`, read while it runs (ProcThreads' parts; memory through
    process_vm_readv)."""
    parts = ProcThreads(pid, because)
    target = native.Target.live(pid)
    target.set_debug_directories(debug_directories())   # frames named from separate debug files, as gdb's are
    return Collector(target, parts.threads, parts.target, python=parts.python, host_tid=parts.host_tid)


def _cut_short(transfer):
    tid, call, fd, what = transfer
    return TargetIssue(TargetWarning.NOT_STOPPED_FOR_TRANSFER, tid=tid, call=call, fd=fd, what=what)


def examine(pid, native_depth=None, locals=False, because=(), kept=None):
    """(ProcessSnapshot, Report) of live process `pid`, read without stopping it.
    `kept`: a list the facts, snapshot and report are added to, for whoever
    ends the process without freeing them (the command line)."""
    from pyhang.analysis.report import analyse
    facts = no_stop_facts(pid, because)
    snapshot, report = analyse(facts, native_depth=native_depth, locals=locals)
    if kept is not None:
        kept.append((facts, snapshot, report))
    return snapshot, report

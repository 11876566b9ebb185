"""The facts of a live process stopped by pyhang itself, without gdb: every
thread stopped by ptrace as a debugger stops it (native ProcessStop:
PTRACE_SEIZE and PTRACE_INTERRUPT, no signal sent), frame 0's registers
from PTRACE_GETREGS, native frames unwound by pyhang's unwinder from them,
memory through process_vm_readv, the interpreter's state read once (the
process holds still).  The process runs on when the analysis has read what
it needs (examine), before anything is printed.

What gdb adds to a stop it makes (pyhang.gdb_batch) is its own unwinder for
a frame without call-frame information; here such a stack ends there, said
as a problem of that thread, as a report not stopped says it
(pyhang.nostop).  The rest is the same facts: the same collector
(native_facts.Collector), the same decoders and pc names.

ptrace answers only the thread that made the stop: the stop, every
registers read and the resume are made from the thread that calls
examine."""
import _pyhang_native as native

from pyhang import namespaces, procfs
from pyhang.checkout import debug_directories
from pyhang.model.facts import FRAME0_REGISTERS, ThreadFacts
from pyhang.model.kinds import ThreadIssueKind
from pyhang.model.live_kinds import ParkState
from pyhang.model.report import ThreadIssue
from pyhang.native_facts import Collector, live_target, stack_runs, thread_bases, unwound

STOP_WAIT_MS = 2000   # for every thread to stop, from the first asked (a thread asleep in the kernel may not)


class StopFailed(Exception):
    """The process could not be stopped: `problem` (native StopProblem's text), `error` (errno)."""

    def __init__(self, pid, problem, error):
        super().__init__("%s (errno %d)" % (problem, error))
        self.pid, self.problem, self.error = pid, problem, error


class StoppedThreads:
    """The parts of a collector of live process `pid` while ProcessStop `stop` holds it: its threads
    (`threads`), its target (`target`), its TIDs as the host knows them (`host_tid`)."""

    def __init__(self, pid, stop):
        self.pid, self.stop = pid, stop
        self.tids_map = namespaces.live_tids(pid)
        # The main thread first, then by TID, as a debugger numbers them; those that did not stop among them.
        self.numbered = list(enumerate(sorted(stop.stopped + stop.not_stopped, key=lambda t: (t != pid, t)), 1))
        self.not_stopped = set(stop.not_stopped)

    def host_tid(self, tid):
        return self.tids_map.to_host(tid)

    def target(self, facts):
        return live_target(facts, self.pid, self.tids_map)

    def threads(self, facts, depth, tids):
        wanted = None if tids is None else {self.host_tid(t) for t in tids}
        target = facts.native_target
        listed = [(num, host, None if host in self.not_stopped else target.registers(host))
                  for num, host in self.numbered if wanted is None or host in wanted]
        return [self._thread(facts, num, host, depth, regs)
                for part in stack_runs(target, listed, lambda item: item[2]) for num, host, regs in part]

    def _thread(self, facts, num, host, depth, regs):
        own = self.tids_map.to_target(host)
        t = ThreadFacts(num=num, tid=own, name=procfs.thread_name(self.pid, host), unwound_by="pyhang",
                        host_tid=host if own != host else None)
        problems = []
        if regs is None:
            # It did not stop by the deadline (a sleep no signal ends, in the kernel): where its system-call
            # record says it is, as a look that does not stop a process reads it (pyhang.nostop).
            problems.append(ThreadIssue(ThreadIssueKind.NOT_STOPPED, number=STOP_WAIT_MS))
            parked = native.parked_registers(facts.native_target, host)
            regs = dict(parked.registers) if parked and parked.state in (ParkState.IN_CALL, ParkState.BLOCKED) \
                else {}
            base = thread_bases(facts, self.host_tid)[0].get(host)
            if base is not None:   # its struct pthread, which glibc's lists link: joins and fork facts know it by it
                regs["fs_base"] = base
            regs = regs or None
        if regs is not None:
            t.registers = {r: regs[r] for r in FRAME0_REGISTERS if r in regs}
        if regs is not None and "rip" in regs:
            t.frames, cut = unwound(facts, regs, depth)
            problems += cut
        t.problem = problems or None
        return t


def stopped_facts(pid, stop):
    """The collector of live process `pid` while ProcessStop `stop` holds every thread of it."""
    parts = StoppedThreads(pid, stop)
    target = native.Target.live(pid)
    target.set_debug_directories(debug_directories())   # frames named from separate debug files, as gdb's are
    return Collector(target, parts.threads, parts.target, host_tid=parts.host_tid)


def examine(pid, native_depth=None, locals=False, kept=None):
    """(ProcessSnapshot, Report) of live process `pid`, stopped for the read and running again before this
    returns; raises StopFailed when it could not be stopped.  `kept`: a list the facts, snapshot and report
    are added to, for whoever ends the process without freeing them (the command line)."""
    from pyhang.analysis.report import analyse
    with native.ProcessStop.stop(pid, STOP_WAIT_MS) as stop:
        if stop.problem:
            raise StopFailed(pid, stop.problem, stop.error)
        facts = stopped_facts(pid, stop)
        snapshot, report = analyse(facts, native_depth=native_depth, locals=locals)
    if kept is not None:
        kept.append((facts, snapshot, report))
    return snapshot, report


def lock_objects(pid, addresses):
    """What live process `pid` has at each of `addresses` (Collector.lock_objects), read while stopped; raises
    StopFailed when it could not be stopped."""
    with native.ProcessStop.stop(pid, STOP_WAIT_MS) as stop:
        if stop.problem:
            raise StopFailed(pid, stop.problem, stop.error)
        return stopped_facts(pid, stop).lock_objects(addresses)

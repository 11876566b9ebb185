"""The one collector (pyhang.model.facts.Facts) of a native Target, built
from parts: where its threads come from, what it says of the target itself,
where its decoders are kept, the core's path and sysroot.  Everything else
the native decoders answer here, the same for every collector:

- gdb's (pyhang_gdb.facts): gdb's threads and target, the decoders kept for
  the stop (pyhang_gdb.decoders), shared with gdb's other commands;
- no-stop (pyhang.nostop): threads from /proc, the interpreter read twice;
- the command line's (pyhang.gdb_pipe.read_here): a gdb over a pipe gives
  the threads and the target, this process reads the memory itself.
"""
import os
import time

import _pyhang_native as native

from pyhang import fd_holders, proc_record, procfs, sources
from pyhang.model.facts import MEMBERS_MAX, Facts
from pyhang.model.files import FdObject
from pyhang.model.glibc_kinds import LayoutsProblem, LibcAbsence
from pyhang.model.kinds import ForkProblem, PythonStatus, ThreadIssueKind
from pyhang.model.live_kinds import UnwindStop
from pyhang.model.fork_facts import ForkFacts, ForkIssue
from pyhang.model.proc_record import summary
from pyhang.model.report import NativeFrame, ThreadIssue
from pyhang.model.target_facts import TargetFacts
from pyhang.model.waits import LockIdentification, from_data

# The native readers of a system call's arguments in target memory, by the
# names pyhang.analysis.syscalls.memory_wanted gives them.
_SYSCALL_READERS = {"pollfds": native.read_pollfds, "fd_set": native.read_fd_set,
                    "timespec": native.read_timespec, "timeval": native.read_timeval, "flock": native.read_flock}


def clock_now(clock):
    """The time on `clock` (ns), or None when this machine has no such clock."""
    try:
        return time.clock_gettime_ns(clock)
    except (OSError, ValueError, OverflowError):
        return None


def musl_libc(path):
    """Whether the file at `path` is musl's libc: Alpine's ld-musl-ARCH.so.1 or libc.musl-ARCH.so.1, or a libc.so in a
    directory of musl's (Debian's /usr/lib/x86_64-linux-musl/libc.so, whose loader ld-musl links to it)."""
    base = os.path.basename(path or "")
    if base.startswith(("ld-musl", "libc.musl")):
        return True
    return base.startswith("libc.so") and "musl" in os.path.dirname(path)


def named_frames(target, pcs, made):
    """A thread's pcs symbolized as NativeFrames.  Outer frames' pcs are
    return addresses: pc-1 is looked up, so a call at the end of a function
    names that function.  Each (pc, innermost) is one NativeFrame in `made`,
    shared by the threads that run the same code (a pool parks its workers
    at the same pcs); nothing changes a NativeFrame once made."""
    for i, pc in enumerate(pcs):
        if pc < 4096:  # where an unwinder without symbols lost its way
            pcs = pcs[:i]
            break
    keys = [(pc, i == 0) for i, pc in enumerate(pcs)]
    missing = [k for k in dict.fromkeys(keys) if k not in made]
    if missing:
        names = target.symbolize([pc if innermost else pc - 1 for pc, innermost in missing])
        for (pc, innermost), (fn, lib, off, from_debug) in zip(missing, names):
            made[(pc, innermost)] = NativeFrame(pc=pc, function=fn, library=lib,
                                                offset=off + (0 if innermost else 1) if fn else 0,
                                                from_debug_file=from_debug)
    return [made[k] for k in keys]


def live_target(facts, pid, tids_map, warnings=()):
    """The target facts of live process `pid` read by `facts` (a Collector), its TIDs mapped by `tids_map`
    (namespaces.live_tids): `warnings` first, then its reader's."""
    t = facts.native_target
    return facts.target_facts(kind="live", pid=pid, executable=t.executable or None,
                              namespace_pid=tids_map.pid, parent_pid=procfs.parent_pid(pid),
                              warnings=list(warnings) + list(t.warnings))


def thread_bases(facts, host_tid):
    """({host TID: its struct pthread}, the walk's problem) from glibc's lists of threads (native
    thread_descriptors), walked once per collector (`facts.once`): the fs_base a debugger gives a thread,
    for one whose registers are not known.  `host_tid`: a target TID → the host's."""
    def walk():
        found = native.thread_descriptors(facts.native_target)
        return {host_tid(tid): base for tid, base in found.threads.items()}, found.problem
    return facts.once("descriptors", walk)


# The pages at and above a stopped or parked thread's stack pointer read ahead of its unwinding: its C stack
# (a parked Python thread's is a few KiB) and the struct pthread at the stack's top.
STACK_PAGES = 3
PAGE = 4096


def stack_runs(target, items, registers_of):
    """`items` in runs, each run's stack pages (STACK_PAGES at and above the `rsp` of registers_of(item), a
    dict or None) read in one batch before it is yielded: as many threads a run as the page cache keeps the
    pages of until they are unwound (Target.batch_pages; all at once, nothing read ahead, for a core)."""
    bound = target.batch_pages()
    if not bound:
        yield items
        return
    run = max(1, bound // STACK_PAGES)
    for first in range(0, len(items), run):
        part = items[first:first + run]
        stacks = [regs["rsp"] for regs in map(registers_of, part) if regs and "rsp" in regs]
        target.prefetch([rsp + k * PAGE for rsp in stacks for k in range(STACK_PAGES)])
        yield part


def unwound(facts, registers, depth):
    """(native frames, [] or [a STACK_CUT ThreadIssue]) of a thread from frame 0's `registers`, by pyhang's
    unwinder, at most `depth` frames (none when 0): the issue says where it ended early, and why."""
    pcs, stop = facts.decoders.unwinder().unwind(registers, depth) if depth else ([], UnwindStop.DEPTH)
    cut = [] if stop in UnwindStop.COMPLETE else [ThreadIssue(ThreadIssueKind.STACK_CUT, number=len(pcs), text=stop)]
    return facts.decoders.frames(pcs), cut


def kept_in_dict():
    """A `cached(name, make)` over a dict of its own: decoders kept as long as their collector."""
    kept = {}

    def cached(name, make):
        if name not in kept:
            kept[name] = make()
        return kept[name]
    return cached


class Decoders:
    """The native decoders of `target`, each made once and kept by `cached(name, make)`: a plain dict's
    (kept_in_dict), or gdb's for the stop (pyhang_gdb.decoders), under the same names either way."""

    def __init__(self, target, cached=None):
        self.target = target
        self.cached = cached or kept_in_dict()

    def interpreter(self):
        """The interpreter, located and walked once (threads, frames, GIL)."""
        return self.cached("interpreter", lambda: native.Interpreter(self.target))

    def python_state(self):
        """The decoded CPython state (a python_facts.PythonState: the Interpreter's state())."""
        return self.cached("python", lambda: self.interpreter().state())

    def lock_reader(self):
        """glibc's version, lock layouts and pthread_t mapping."""
        return self.cached("locks", lambda: native.LockReader(self.target, None))

    def python_locks(self):
        """threading's locks and objects over the interpreter already read."""
        return self.cached("pylocks", lambda: native.PythonLocks(self.interpreter()))

    def python_values(self):
        """Python values as text and frame locals."""
        return self.cached("values", lambda: native.PythonValues(self.interpreter()))

    def unwinder(self):
        return self.cached("unwinder", lambda: native.Unwinder(self.target))

    def frames(self, pcs):
        """named_frames of `pcs`, each frame made once for these decoders."""
        return named_frames(self.target, pcs, self.cached("native-frames", dict))


class Collector(Facts):
    """The facts of the native Target `native_target`, from parts (see the module's doc):

    - `threads(collector, depth, tids)`: [ThreadFacts], in the debugger's order;
    - `target(collector)`: the TargetFacts (most make it with collector.target_facts);
    - `python(collector)`: the PythonState, when not the decoders' one read;
    - `host_tid(tid)`: the TID the host's /proc knows a thread by (by default: as `threads` gave it);
    - `process_id`: the live process's pid as the host knows it (the target's, by default; None
      for a core);
    - `decoders`: a Decoders of the target (one of its own by default);
    - `core`: the core file's path, for its record of /proc; `sysroot`: where a core's files are."""

    def __init__(self, native_target, threads, target, python=None, host_tid=None, process_id=None,
                 decoders=None, core=None, sysroot=None):
        self.native_target = native_target
        self.decoders = decoders or Decoders(native_target)
        self._threads_part, self._target_part, self._python_part = threads, target, python
        self._host_tid = host_tid
        self._process_id = process_id if process_id is not None else \
            (native_target.pid if native_target.kind != "core" else None)
        self.core, self.given_sysroot = core, sysroot
        self.by_tid = {}   # TID → the ThreadFacts `threads` last gave
        self.made = {}     # (depth, tids) → what `threads` gave
        self.memo = {}

    def once(self, name, make):
        if name not in self.memo:
            self.memo[name] = make()
        return self.memo[name]

    # ---- the decoders ----

    def executable_problem(self):
        """Why the target's executable could not be read here (its symbols,
        where a Python runtime linked into it is found), or None."""
        t = self.native_target
        return next((o.problem for o in t.objects() if o.path == t.executable and o.problem), None)

    def interpreter(self):
        return self.decoders.interpreter()

    def lock_reader(self):
        return self.decoders.lock_reader()

    def python_locks_decoder(self):
        return self.decoders.python_locks()

    def python_values(self):
        return self.decoders.python_values()

    def target_facts(self, **fields):
        """The TargetFacts of `fields` (kind, pid, ... warnings: what the target part knows of the target),
        with the executable's problem, the lock layouts' problem and caveat, and a core's record of /proc
        (or why the one it holds is not used) read here."""
        reader = self.lock_reader()
        record, problem = self.proc_record()
        fields["warnings"] = list(fields.get("warnings") or ()) + ([problem] if problem else [])
        lock_problem = reader.problem
        if lock_problem is not None and lock_problem.kind == LayoutsProblem.LIBC_NOT_MAPPED:
            lock_problem.detail, lock_problem.library = self._no_glibc(fields.get("executable"))
        elif lock_problem is not None and lock_problem.kind == LayoutsProblem.NO_VERSION and \
                musl_libc(lock_problem.library):
            lock_problem.detail = LibcAbsence.MUSL   # Debian's musl names its libc libc.so, in a musl directory
        return TargetFacts(executable_problem=self.executable_problem(), lock_problem=lock_problem,
                           lock_caveat=reader.caveat,
                           proc_record=summary(record) if record is not None else None, **fields)

    def _no_glibc(self, executable):
        """Why no glibc is mapped in the target, from the files it maps: (LibcAbsence.MUSL, musl's libc) or
        (LibcAbsence.STATIC, the executable) when no libc.so is mapped at all."""
        try:
            paths = [o.path for o in self.native_target.objects()]
        except Exception:  # noqa: BLE001 — the files mapped are not known: said as before
            return "", ""
        musl = next((p for p in paths if musl_libc(p)), None)
        if musl:
            return LibcAbsence.MUSL, musl
        if not any(os.path.basename(p).startswith("libc.so") for p in paths):
            return LibcAbsence.STATIC, executable or self.native_target.executable or ""
        return "", ""

    def proc_record(self):
        """(ProcRecord, None) of a core that holds pyhang gcore's record of /proc; (None, the TargetWarning's
        data) when the one it holds is not used; (None, None) for a process or a core without one
        (pyhang.proc_record.read)."""
        def make():
            path = self.core if self.native_target.kind == "core" else None
            return proc_record.read(path, self.native_target.pid) if path else (None, None)
        return self.once("proc-record", make)

    def recorded(self):
        """The ProcRecord of a core that holds one in use, else None."""
        return self.proc_record()[0]

    # ---- the questions ----

    def target(self):
        return self._target_part(self)

    def python(self):
        if self._python_part is None:
            return self.decoders.python_state()
        return self.once("python", lambda: self._python_part(self))

    def threads(self, depth, tids=None):
        key = (depth, None if tids is None else tuple(sorted(tids)))
        if key not in self.made:
            self.made[key] = self._named(self._threads_part(self, depth, tids))
        self.by_tid.update((t.tid, t) for t in self.made[key])
        return self.made[key]

    def _named(self, threads):
        """`threads`, those of a core without a name (a core keeps none) named as its record of /proc does."""
        record = self.recorded() if self.native_target.kind == "core" else None
        if record is not None:
            names = {t.tid: t.comm for t in record.threads}
            for t in threads:
                if t.name is None:
                    t.name = names.get(t.host_tid or t.tid)
        return threads

    def locks(self, tids):
        known = [tid for tid in tids if tid in self.by_tid]
        asked = [[tid, self.by_tid[tid].registers,
                  [{"pc": f.pc, "function": f.function, "library": f.library} for f in self.by_tid[tid].frames]]
                 for tid in known]
        found = dict(zip(known, self.lock_reader().identify_all(asked))) if asked else {}
        return [[tid, self._named_lock(found[tid]) if tid in found else LockIdentification()] for tid in tids]

    def _named_lock(self, found):
        if found.kind and found.address:
            symbol, found.library, offset, _ = self.native_target.symbolize([found.address])[0]
            # the ELF symbol the lock is in (a library's global, as gdb names it: drv_lock, or drv_state+0x8)
            found.symbol = (symbol if not offset else "%s+0x%x" % (symbol, offset)) if symbol else None
        return found

    def python_locks(self, waits):
        return self.python_locks_decoder().waits([(tid, futex) for tid, futex in waits])

    def words(self, addresses):
        out = []
        for address in addresses:
            data = self.native_target.read(address, 4)
            out.append(int.from_bytes(data, "little") if data is not None else None)
        return out

    def frame_selves(self, tids):
        return [[tid, selves] for tid, selves in zip(tids, self.python_locks_decoder().frame_selves_of(list(tids)))]

    def attributes(self, requests):
        decoder = self.python_locks_decoder()
        return [decoder.attributes(address, list(names)) for address, names in requests]

    def members(self, addresses):
        return self.python_locks_decoder().members(list(addresses), MEMBERS_MAX)

    def syscall_memory(self, requests):
        return [_SYSCALL_READERS[reader](self.native_target, *args) for reader, args in requests]

    def clock_now(self, clock):
        if self.native_target.kind == "core":
            record = self.recorded()
            return record.clocks.get(str(clock)) if record is not None else None
        return self.once("clock-%d" % clock, lambda: clock_now(clock))

    def host_tid(self, tid):
        """The TID the host's /proc knows thread `tid` by."""
        if self._host_tid is not None:
            return self._host_tid(tid)
        t = self.by_tid.get(tid)   # as the threads part gave it
        return t.host_tid or tid if t is not None else tid

    def process_id(self):
        """The live process's pid as the host's /proc knows it; None for a core."""
        return self._process_id

    def proc_syscalls(self, tids):
        pid = self.process_id()
        if self.native_target.kind == "core":
            record = self.recorded()
            lines = {t.tid: t.syscall for t in record.threads} if record is not None else {}
            calls = [procfs.parse_syscall(lines.get(self.host_tid(tid))) for tid in tids]
        elif not pid:
            return [None] * len(tids)
        else:
            calls = [procfs.thread_syscall(pid, self.host_tid(tid)) for tid in tids]
        return [call[0] if call else None for call in calls]

    def thread_children(self, tids):
        pid = self.process_id()
        if self.native_target.kind == "core" or not pid:
            return [None] * len(tids)
        return [procfs.thread_children(pid, self.host_tid(tid)) for tid in tids]

    def files(self, fds):
        pid = self.process_id()
        if self.native_target.kind == "core":
            return self._recorded_files(fds)
        if not pid:
            return None
        return [[fd, from_data(FdObject, obj)] for fd, obj in sorted(fd_holders.files(pid, sorted(fds)).items())]

    def _recorded_files(self, fds):
        """files() of a core, from its record of /proc: an fd it does not list was not open, unless the
        table was recorded in part (then nothing is known); None without a record."""
        record = self.recorded()
        if record is None:
            return None
        table = {e.fd: e.object for e in record.files}
        if not record.files_complete and any(fd not in table for fd in fds):
            return None
        return [[fd, table.get(fd) or FdObject(kind="closed")] for fd in sorted(fds)]

    def object_names(self, addresses):
        found = self.python_locks_decoder().object_names(sorted(addresses))
        return [[address, path] for address, path in sorted(found.items())]

    def references(self, addresses):
        return self.python_locks_decoder().thread_references(sorted(addresses))

    def frame_locals(self, frames):
        values = self.python_values()
        return [values.frame_locals(frame, code) for frame, code in frames]

    def threading(self):
        return self.once("threading", lambda: self.python_locks_decoder().threading())

    def asyncio(self):
        def make():
            state = native.asyncio_state(self.interpreter())
            if self.native_target.kind == "live":
                state.clock = time.monotonic()  # a sleep's deadline (loop time) is on this clock
            elif self.native_target.kind == "core" and self.recorded() is not None and "1" in self.recorded().clocks:
                state.clock = self.recorded().clocks["1"] / 1e9   # ... as it was when the core was made
            return state
        return self.once("asyncio", make)

    def fork_facts(self, bases):
        def make():
            target = self.native_target
            try:
                facts = native.fork_facts(target, sorted(bases), True, self.interpreter(), containers=False)
            except native.ReaderError as exc:
                return ForkFacts(descriptor_issue=ForkIssue(ForkProblem.READER_ERROR, number=exc.number, text=exc.path,
                                                            reason=exc.reason.text))
            facts.process = process_facts(target.pid) if target.kind == "live" and target.pid else None
            return facts
        return self.once("fork-facts", make)

    def fork_containers(self):
        return self.once("fork-containers", lambda: native.fork_containers(self.interpreter()))

    def sysroot(self):
        """Where a core's files are (gdb's sysroot); None: where the core names them."""
        return self.given_sysroot

    def source_files(self):
        """The target's source files (pyhang.sources), read once each per collector."""
        def make():
            pid = self.process_id()
            return sources.for_live(pid) if pid else sources.for_core(self.sysroot())
        return self.once("source-files", make)

    def source_lines(self, requests):
        return self.source_files().answer(requests)

    def lock_objects(self, addresses):
        if self.python().status != PythonStatus.OK:
            return []
        try:
            return self.python_locks_decoder().lock_objects(sorted(set(addresses)))
        except native.ReaderError:  # nothing can be said of them: the children's hazards stay as they are
            return []


def process_facts(pid):
    """/proc facts of a live process and its parent (fork-hazards): their
    stat files read by pyhang.procfs (the parent pid, the start times), the
    rest by native process_facts()."""
    own = procfs.stat(pid)
    facts = native.process_facts(pid, own["ppid"] if own else 0)
    parent = procfs.stat(own["ppid"]) if own and own["ppid"] > 1 else None
    facts.start_ticks = own["start_ticks"] if own else None
    facts.parent_start_ticks = parent["start_ticks"] if parent else None
    if own is None:
        facts.issue = ForkIssue(ForkProblem.NO_STAT, number=pid)
    return facts

"""What gdb knows: the threads, and for each the registers of frame 0 and
the pcs of its top frames.

Registers and pcs come from the native library when it can give them: frame
0's registers from the core, or live through ptrace (gdb is the tracer), and
pcs from its .eh_frame unwinder.  That needs no thread switch and no gdb
frame objects.  Where the native side cannot (a target read through gdb, a
frame without CFI, an expression it does not evaluate), gdb selects the
thread and its own unwinder walks the frames, with no debug info either way.
"""
from __future__ import annotations
import os
import time
from pyhang.model.record import field, record

import gdb

import _pyhang_native as native

from pyhang import analysis, procfs
from pyhang.analysis import forks, locks, python_api, syscalls
from pyhang.analysis.python_state import PythonView
from pyhang.model.report import NativeFrame, TargetInfo
from pyhang.model.snapshot import ProcessSnapshot, ThreadSnapshot
from pyhang.render.names import object_name
from pyhang_gdb import decoders, namespaces
from pyhang_gdb.session import SESSION, NoTarget, core_path

# Registers the lock and GIL decoders look at in frame 0: the system call
# (orig_rax) and its arguments (the futex word, op and expected value).
# fs_base is the thread's own struct pthread (x86_64 TLS): it tells which
# thread a pthread_join waits for.
# The other argument registers (r10, r8, r9) say what a thread parked in
# another system call waits for (pyhang.analysis.syscalls).
FRAME0_REGISTERS = ("orig_rax", "rdi", "rsi", "rdx", "r10", "r8", "r9", "fs_base")


_NOT_ON_THE_STACK = (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)


@record
class GdbThread:
    """What gdb (or the native unwinder in its place) says of one thread."""
    num: int
    tid: int
    name: str | None
    registers: dict[str, int] = field(default_factory=dict)
    pcs: list[int] = field(default_factory=list)   # frame 0 first
    problem: str | None = None
    unwound_by: str = "gdb"  # or "pyhang": who found registers and pcs
    host_tid: int | None = None  # gdb's TID, when the target's own differs (pyhang_gdb.namespaces)


class SelectionKept:
    """Restores the user's selected thread and frame after a command."""

    def __enter__(self):
        self.thread = gdb.selected_thread()
        try:
            self.frame = gdb.selected_frame()
        except gdb.error:
            self.frame = None
        return self

    def __exit__(self, *exc):
        try:
            if self.thread is not None and self.thread.is_valid():
                self.thread.switch()
                if self.frame is not None and self.frame.is_valid():
                    self.frame.select()
        except gdb.error:
            pass
        return False


def snapshot_current(thread, depth):
    """Registers and top `depth` pcs (none when depth is 0) of the selected thread."""
    snap = GdbThread(num=thread.num, tid=thread.ptid[1] or thread.ptid[0], name=thread.name)
    try:
        frame = gdb.newest_frame()
        for reg in FRAME0_REGISTERS:
            try:
                snap.registers[reg] = int(frame.read_register(reg)) & 0xFFFFFFFFFFFFFFFF
            except (gdb.error, ValueError):
                pass
        while frame is not None and len(snap.pcs) < depth:
            # Inlined calls and tail calls are frames gdb builds from debug info
            # (inline: the caller's pc again; tail call: a function that left no
            # frame on the stack): list each machine frame once, as on a
            # stripped binary and as pyhang's own unwinder does.
            if frame.type() not in _NOT_ON_THE_STACK:
                snap.pcs.append(int(frame.pc()))
            frame = frame.older()
    except gdb.error as exc:
        snap.problem = "cannot unwind: %s" % (exc,)
    return snap


# The native unwinder's stops after which its pcs are all there is to have.
COMPLETE = ("end", "depth")


def native_snapshot(thread, depth, native):
    """The snapshot of `thread` from the native side, or None when gdb must
    unwind it.  `native` is (Target, Unwinder), or None to always ask gdb."""
    if native is None:
        return None
    target, unwinder = native
    tid = thread.ptid[1] or thread.ptid[0]
    regs = target.registers(tid)
    if regs is None:
        return None
    pcs, stop = unwinder.unwind(regs, depth) if depth else ([], "depth")
    if stop not in COMPLETE:
        return None
    return GdbThread(num=thread.num, tid=tid, name=thread.name, pcs=pcs, unwound_by="pyhang",
                          registers={r: regs[r] for r in FRAME0_REGISTERS if r in regs})


def snapshot_selected(thread, depth, native=None):
    """Snapshot of the selected thread: natively when possible, else from gdb's frames."""
    tids = target_tids()
    if tids.listed_twice(thread.ptid[1]):
        own = thread.ptid[1]
        return GdbThread(num=thread.num, tid=own, name=thread.name, host_tid=tids.to_host(own),
                         problem="gdb lists this thread twice: as LWP %d (the TID in its PID namespace) and "
                                 "as LWP %d (the host's); only the second has registers" % (own, tids.to_host(own)))
    return in_target_tids([native_snapshot(thread, depth, native) or snapshot_current(thread, depth)])[0]


def target_tids():
    """The target's own TIDs against gdb's, once per stop (pyhang_gdb.namespaces).
    gdb's TIDs are the host's: in a PID namespace the target's own differ."""
    def compute():
        target = SESSION.target()
        if target.kind == "live" and target.pid:
            return namespaces.live_tids(target.pid)
        if target.kind == "core":
            reader = decoders.lock_reader()
            return namespaces.core_tids([(tid, regs.get("fs_base")) for tid, regs in target.core_threads()],
                                        reader.pthread_tid, target.pid)
        return namespaces.Tids()
    return SESSION.cached("target-tids", compute)


def thread_numbers():
    """[(gdb's thread number, the target's own TID)] of every thread."""
    tids = target_tids()
    return [(t.num, tids.to_target(t.ptid[1])) for t in SESSION.threads() if not tids.listed_twice(t.ptid[1])]


def in_target_tids(raws):
    """`raws` with the TIDs the target itself uses (gdb's kept as host_tid)."""
    tids = target_tids()
    if not tids:
        return raws
    raws = [r for r in raws if not tids.listed_twice(r.tid)]
    for r in raws:
        own = tids.to_target(r.tid)
        if own != r.tid:
            r.host_tid, r.tid = r.tid, own
    return raws


def snapshot_thread(thread, depth, native=None):
    """Snapshot of one thread, natively when possible, else by selecting it
    in gdb (the caller restores the selection: see SelectionKept)."""
    snap = native_snapshot(thread, depth, native)
    if snap is not None:
        return snap
    try:
        thread.switch()
    except gdb.error as exc:
        return GdbThread(num=thread.num, tid=thread.ptid[1], name=None,
                              problem="cannot select thread: %s" % (exc,))
    return snapshot_current(thread, depth)


def snapshot_threads(depth, threads=None, native=None):
    """Snapshots of every thread of the selected inferior, in gdb's order."""
    threads = threads if threads is not None else SESSION.threads()
    tids = target_tids()
    threads = [t for t in threads if not tids.listed_twice(t.ptid[1])]
    out = []
    with SelectionKept():
        for t in sorted(threads, key=lambda t: t.num):
            if t.is_valid():
                out.append(snapshot_thread(t, depth, native))
    return in_target_tids(out)


# ---- snapshots: what gdb says plus what the native decoders read ---------

DEFAULT_NATIVE_DEPTH = 8
LOCK_FRAME_DEPTH = 6  # lock functions sit within the top frames

# The parts of a native lock identification the analysis reads.
_LOCK_KEYS = ("kind", "address", "owners", "owner_source", "confidence", "evidence", "lock", "condvar_mutex")


def native_frames(target, pcs):
    """Symbolize a thread's pcs.  Outer frames' pcs are return addresses:
    look up pc-1 so a call at the end of a function names that function.
    Frames are made once per stop for each (pc, innermost) and shared by the
    threads that run the same code (a pool parks its workers at the same
    pcs); nothing changes a NativeFrame once made."""
    # A pc in the first page is where an unwinder without symbols lost its way.
    for i, pc in enumerate(pcs):
        if pc < 4096:
            pcs = pcs[:i]
            break
    made = SESSION.cached("native-frames", dict)
    keys = [(pc, i == 0) for i, pc in enumerate(pcs)]
    missing = [k for k in dict.fromkeys(keys) if k not in made]
    if missing:
        for (pc, innermost), (fn, lib, off, from_debug_file) in zip(
                missing, target.symbolize([pc if innermost else pc - 1 for pc, innermost in missing])):
            made[(pc, innermost)] = NativeFrame(pc=pc, function=fn, library=lib,
                                                offset=off + (0 if innermost else 1) if fn else 0,
                                                from_debug_file=from_debug_file)
    return [made[k] for k in keys]


def thread_snapshot(target, raw):
    """The model's ThreadSnapshot of a GdbThread: its pcs symbolized."""
    return ThreadSnapshot(num=raw.num, tid=raw.tid, name=raw.name, registers=raw.registers,
                          frames=native_frames(target, raw.pcs), problem=raw.problem, unwound_by=raw.unwound_by,
                          host_tid=raw.host_tid)


def add_lock_facts(stop, view, snap):
    """Decode what `snap` sleeps on, as far as the analysis will look
    (pyhang.analysis.locks.wants_*).  `stop`: a decoders.Stop."""
    if not locks.wants_lock(view, snap.tid, snap.registers, snap.frames):
        return snap
    target = stop.target
    frames = [{"pc": f.pc, "function": f.function, "library": f.library} for f in snap.frames]
    identified = stop.lock_reader.identify(snap.tid, snap.registers, frames)
    if identified.get("kind"):
        snap.lock = {k: identified.get(k) for k in _LOCK_KEYS}
        address = identified.get("address")
        snap.lock["library"] = target.symbolize([address])[0][1] if address else None
    futex = locks.wants_python_lock(view, snap.tid, snap.registers, snap.lock)
    if futex is not None:
        wait = stop.python_locks.wait(snap.tid, futex)
        if wait.get("kind") or wait.get("join_self"):
            snap.python_lock = wait
            add_python_api(stop.python_locks, view, snap)
        elif wait.get("parking_address"):
            # no Python lock, but what a parking-lot waiter waits for (3.13+): a ThreadHandle's exit event
            snap.python_lock = {"parking_address": wait["parking_address"]}
    address = locks.wants_futex_word(snap.lock)
    if address is not None:
        word = target.read(address, 4)
        snap.futex_word = int.from_bytes(word, "little") if word is not None else None
    return snap


def add_python_api(python_locks, view, snap):
    """The `self` of the Python-level API a thread waits in, and the
    attributes the analysis names it by (pyhang.analysis.python_api)."""
    wanted = python_api.candidates(view, snap.tid)
    if not wanted:
        return
    locks = python_locks
    selves = {f["index"]: f for f in locks.frame_selves(snap.tid)}
    for index, api in wanted:
        frame = selves.get(index)
        if frame is not None and frame["self"] and python_api.type_fits(api, frame["type"]):
            break
    else:
        return
    snap.python_api = {"kind": api.kind, "self": frame["self"], "type": frame["type"],
                       "frame": {"function": frame["function"], "file": frame["file"], "line": frame["line"]},
                       "attributes": locks.attributes(frame["self"], list(api.attributes))}


# The native readers of a system call's arguments in target memory, by the
# names pyhang.analysis.syscalls.memory_wanted gives them.
_SYSCALL_READERS = {"pollfds": native.read_pollfds, "fd_set": native.read_fd_set,
                    "timespec": native.read_timespec, "timeval": native.read_timeval}


def _plain(value):
    """Tuples as lists, as JSON gives them back."""
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


def _clock_now(clock):
    """The time on `clock` (read once per stop: the moment the target is seen)."""
    try:
        return time.clock_gettime_ns(clock)
    except (OSError, ValueError, OverflowError):
        return None


def add_syscall_facts(target, snap):
    """What the blocking system call of `snap` points at in target memory,
    and, for restart_syscall on a live target, what the kernel records."""
    parked = syscalls.parked(snap.registers)
    if parked is None:
        return snap
    memory = {}
    for label, reader, args in syscalls.memory_wanted(snap.registers):
        memory[label] = _plain(_SYSCALL_READERS[reader](target, *args))
    snap.syscall = {"memory": memory}
    clock = syscalls.clock_wanted(snap.registers)
    if clock is not None and target.kind != "core":
        now = SESSION.cached("clock-%d" % clock, lambda: _clock_now(clock))
        if now is not None:
            snap.syscall["clock_now_ns"] = now
    if parked[0] == syscalls.RESTART and target.kind != "core" and target.pid:
        call = procfs.thread_syscall(target.pid, snap.host_tid or snap.tid)
        snap.syscall["proc_syscall"] = call[0] if call else None
    return snap


def files_of(target, threads):
    """The /proc facts of the fds the threads wait on (pyhang.procfs), or
    None for a core (cores do not record fd tables)."""
    pid = target.pid or gdb.selected_inferior().pid
    if target.kind == "core" or not pid:
        return None
    fds = set()
    for t in threads:
        fds.update(syscalls.fds_wanted(t.registers, (t.syscall or {}).get("memory")))
    return procfs.files(pid, sorted(fds)) if fds else {}


def add_pool_workers(view, threads):
    """The pool of each ThreadPoolExecutor worker: the `work_queue` local of
    its loop's frame (python_api.worker_frame)."""
    values = None
    for t in threads:
        f = python_api.worker_frame(view, t.tid)
        if f is None:
            continue
        values = values or decoders.python_values()
        local = next((l for l in values.frame_locals(f["frame"], f["code"])["locals"]
                      if l["name"] == python_api.WORKER[2]), None)
        if local and local.get("address"):
            t.pool_worker = {"work_queue": local["address"]}


def add_references(stop, threads):
    """Which threads reach the objects the analysis asks about
    (python_api.references_wanted): python_api["referenced_by"]."""
    wanted = {t.tid: python_api.references_wanted(t.python_api) for t in threads}
    addresses = sorted({a for a in wanted.values() if a})
    if not addresses:
        return
    refs = stop.python_locks.thread_references(addresses)
    for t in threads:
        if wanted[t.tid]:
            t.python_api["referenced_by"] = list(refs["by_object"].get(wanted[t.tid], []))
            t.python_api["references_complete"] = refs["complete"]


def lock_objects(addresses):
    """Each of `addresses` as this process has it (PythonLocks.lock_objects):
    what a fork parent says about the locks its children wait on; [] when
    the process has no Python state to read."""
    view = PythonView(decoders.python_state())
    if not view.ok:
        return []
    try:
        return decoders.python_locks().lock_objects(sorted(set(addresses)))
    except native.ReaderError:  # nothing can be said of them: the children's hazards stay as they are
        return []


def object_names(stop, threads):
    """{address: name} for the objects the threads wait on that a variable
    of the program reaches (render.names.object_name words it)."""
    wanted = set()
    for t in threads:
        wanted.update(locks.named_objects(t.lock, t.python_lock, t.python_api))
    wanted.discard(None)
    if not wanted:
        return {}
    return {a: object_name(p) for a, p in stop.python_locks.object_names(sorted(wanted)).items()}


def target_info(target):
    inferior = gdb.selected_inferior()
    exe = target.executable or gdb.current_progspace().filename
    info = TargetInfo(kind=target.kind, pid=target.pid or inferior.pid or None, executable=exe,
                      namespace_pid=target_tids().pid)
    if target.kind == "core":
        info.core = core_path()
        info.parent_pid = target.parent_pid
    elif info.pid:
        info.parent_pid = procfs.parent_pid(info.pid)
    return info


def executable_warnings(target):
    """gdb's idea of the executable against the target's own record."""
    given = gdb.current_progspace().filename
    if given is not None and given.startswith("target:"):  # gdb reads it through the target: the same file
        given = given[len("target:"):]
    if given is None:
        return ["gdb was given no executable; pyhang reads symbols from the files the target mapped"]
    if target.executable and os.path.realpath(given) != os.path.realpath(target.executable):
        return ["gdb was given the executable %s, but the target runs %s: gdb's own frames may be wrong; "
                "pyhang reads %s" % (given, target.executable, target.executable)]
    return []


def sysroot_warnings(target):
    """Cores: a hint when most of the files the core's process mapped are
    missing here or are other builds (their build-ids differ), as for a core
    made in a container or on another machine, and no sysroot was given."""
    if target.kind != "core" or gdb.parameter("sysroot") not in ("", "target:", None):
        return []
    objects = [o for o in target.objects() if o["path"].startswith("/")]
    lost = [o for o in objects if o["problem"]]
    if not objects or len(lost) * 2 < len(objects):
        return []
    return ["%d of the %d files the core's process mapped are missing here or are other builds: a core made in a "
            "container or on another machine is read with the files of its own root file system, given with "
            "--sysroot DIR (in gdb: set sysroot DIR, before the core is loaded)" % (len(lost), len(objects))]


# Bytes at a thread's stack pointer that are never all zero on a real stack
# (return addresses and saved registers of the frames that called into the
# kernel lie there).
_STACK_PROBE = 512


def zeroed_stack_warnings(target):
    """Cores: the threads at whose stack pointer the core holds nothing but
    zeros.  gdb's gcore writes a mapping it cannot read from its first page on
    as zeros, and glibc 2.42+ starts every thread stack with a guard page
    (MADV_GUARD_INSTALL, Linux 6.13+) that no one can read: such a core has
    lost those threads' stacks."""
    if target.kind != "core":
        return []
    lost = []
    for tid, regs in target.core_threads():
        sp = regs.get("rsp")
        data = target.read(sp, _STACK_PROBE) if sp else None
        if data is not None and not any(data):
            lost.append(tid)
    if not lost:
        return []
    return ["the core holds only zeros at the stack pointer of %d thread%s (LWP %s): what wrote it could not "
            "read %s stack (gdb's gcore cannot read a mapping that starts with a guard page, which glibc 2.42+ "
            "puts at the start of every thread stack on Linux 6.13+); %s native frames, and on CPython 3.12+ "
            "the Python frames of C calls, are lost. A core the kernel writes (ulimit -c, then SIGABRT), or "
            "the live process, has them" % (len(lost), "" if len(lost) == 1 else "s",
                                            ", ".join(str(t) for t in lost[:8]) + (", ..." if len(lost) > 8 else ""),
                                            "its" if len(lost) == 1 else "their", "its" if len(lost) == 1 else "their")]


def thread_bases():
    """fs_base (its struct pthread) → TID of every thread, once per stop."""
    def compute():
        native = decoders.native_stacks()
        with SelectionKept():
            raws = in_target_tids([snapshot_thread(t, 0, native) for t in SESSION.threads() if t.is_valid()])
        return {r.registers["fs_base"]: r.tid for r in raws if "fs_base" in r.registers}
    return SESSION.cached("thread-bases", compute)


def selected_thread(depth):
    """(ThreadSnapshot with lock facts, PythonView) of the selected thread."""
    thread = gdb.selected_thread()
    if thread is None:
        raise NoTarget("no thread is selected")
    target = SESSION.target()
    view = PythonView(decoders.python_state())
    snap = thread_snapshot(target, snapshot_selected(thread, depth, decoders.native_stacks()))
    return snap, view


def process_snapshot(native_depth=DEFAULT_NATIVE_DEPTH, lock_facts=True):
    """(ProcessSnapshot, PythonView) of the selected inferior: every thread
    with `native_depth` native frames and (with `lock_facts`) the lock facts
    it needs."""
    target = SESSION.target()
    state = decoders.python_state()
    view = PythonView(state)
    reader = decoders.lock_reader()
    raws = snapshot_threads(native_depth, native=decoders.native_stacks())
    threads = [thread_snapshot(target, r) for r in raws]
    # Each thread's struct pthread (fs_base) is known now: joins and fork
    # facts need not switch to every thread again.
    SESSION.cached("thread-bases", lambda: locks.thread_bases(threads))
    names = {}
    if lock_facts:
        stop = decoders.Stop()
        for t in threads:
            add_lock_facts(stop, view, t)
            add_syscall_facts(target, t)
        if view.ok:
            names = object_names(stop, threads)
            add_references(stop, threads)
            add_pool_workers(view, threads)
    snap = ProcessSnapshot(target=target_info(target), python=state, threads=threads,
                           warnings=list(target.warnings) + executable_warnings(target) +
                           sysroot_warnings(target) + zeroed_stack_warnings(target),
                           lock_problem=reader.problem or None, native_depth=native_depth,
                           threading=decoders.threading() if view.ok else None, names=names,
                           files=files_of(target, threads) if lock_facts else None,
                           asyncio=decoders.asyncio() if view.ok else None)
    return snap, view


def deepen(snapshot, report, tids):
    """Unwind the threads `tids` HEURISTIC_NATIVE_DEPTH deep, in the snapshot
    and in the report, for the driver-lock heuristics."""
    target = SESSION.target()
    hosts = {target_tids().to_host(t) for t in tids}
    wanted = [t for t in SESSION.threads() if t.is_valid() and t.ptid[1] in hosts]
    deeper = {r.tid: r for r in snapshot_threads(analysis.report.HEURISTIC_NATIVE_DEPTH, threads=wanted,
                                                 native=decoders.native_stacks())}
    reported = {t.tid: t for t in report.threads}
    for snap in snapshot.threads:
        raw = deeper.get(snap.tid)
        if raw is not None and not raw.problem:
            snap.frames = native_frames(target, raw.pcs)
            reported[snap.tid].native_frames = snap.frames


LOCAL_KEYS = ("name", "kind", "type", "repr", "address")


def python_locals(snapshot, view):
    """Each thread's Python frames' locals (`report --locals`), rendered from target memory."""
    values = decoders.python_values()
    for t in snapshot.threads:
        pt = view.thread(t.tid)
        if pt is None:
            continue
        t.python_locals = []
        for f in pt["frames"]:
            fl = values.frame_locals(f["frame"], f["code"])
            t.python_locals.append({"locals": [{k: v[k] for k in LOCAL_KEYS} for v in fl["locals"]],
                                    "problem": fl["problem"]})


def fork_facts_of(report):
    """The native fork facts of the stop; the large containers among module
    globals only for a fork child (analysis.forks.is_child), the one process
    they are a hazard in: finding them reads every module's globals."""
    facts = decoders.fork_facts(thread_bases())
    py = facts.get("python")
    if not py or not forks.is_child(report, facts):
        return facts
    found = decoders.fork_containers()
    return dict(facts, python=dict(py, containers=found["containers"],
                                   problems=list(py.get("problems") or []) + list(found["problems"])))


def report(native_depth=None, fork_facts=True, locals=False):
    """(ProcessSnapshot, Report) of the selected inferior.  Without an
    explicit `native_depth`, blocked threads are unwound deeper when the
    analysis asks for it (pyhang.analysis.frames_wanted).  With `locals`,
    every Python frame's locals too."""
    depth = native_depth or DEFAULT_NATIVE_DEPTH
    snapshot, view = process_snapshot(depth)
    if locals and view.ok:
        python_locals(snapshot, view)
    rep = analysis.threads(snapshot, view)
    if native_depth is None:
        wanted = analysis.frames_wanted(rep, depth)
        if wanted:
            deepen(snapshot, rep, wanted)
    if fork_facts:
        snapshot.fork_facts = fork_facts_of(rep)
    analysis.conclude(rep, snapshot)
    return snapshot, rep

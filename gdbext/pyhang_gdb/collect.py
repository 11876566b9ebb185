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
from pyhang.model.record import field, record

import gdb


from pyhang import procfs
from pyhang.analysis import gather
from pyhang.analysis.python_state import PythonView
from pyhang.model.facts import FRAME0_REGISTERS, ThreadFacts
from pyhang.model.kinds import TargetWarning, ThreadIssueKind
from pyhang.model.report import ThreadIssue
from pyhang.model.warning_facts import TargetIssue
from pyhang import namespaces
from pyhang_gdb import decoders
from pyhang_gdb.session import SESSION, core_path, selected_gdb_thread


_NOT_ON_THE_STACK = (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)


@record
class GdbThread:
    """What gdb (or the native unwinder in its place) says of one thread."""
    num: int
    tid: int
    name: str | None
    registers: dict[str, int] = field(default_factory=dict)
    pcs: list[int] = field(default_factory=list)   # frame 0 first
    problem: list | None = None   # ThreadIssues: what could not be read about it
    unwound_by: str = "gdb"  # or "pyhang": who found registers and pcs
    host_tid: int | None = None  # gdb's TID, when the target's own differs (pyhang.namespaces)


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
        snap.problem = [ThreadIssue(ThreadIssueKind.CANNOT_UNWIND, text=str(exc))]
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
        return _listed_twice(thread, tids)
    return in_target_tids([native_snapshot(thread, depth, native) or snapshot_current(thread, depth)])[0]


def target_tids():
    """The target's own TIDs against gdb's, once per stop (pyhang.namespaces).
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
                              problem=[ThreadIssue(ThreadIssueKind.CANNOT_SELECT, text=str(exc))])
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

def thread_facts(raw):
    """The ThreadFacts of a GdbThread: its pcs named by the stop's decoders."""
    return ThreadFacts(num=raw.num, tid=raw.tid, name=raw.name, registers=raw.registers,
                       frames=decoders.stop_decoders().frames(raw.pcs), problem=raw.problem,
                       unwound_by=raw.unwound_by, host_tid=raw.host_tid)


def thread_raws(depth, tids=None):
    """GdbThreads of every thread (or of the target's TIDs `tids`), `depth`
    pcs each: natively where the native side can, else by gdb's unwinder.
    A thread gdb lists twice is answered by its entry that has registers."""
    native = decoders.native_stacks()
    if tids is None:
        return snapshot_threads(depth, native=native)
    tids_map = target_tids()
    own = set(tids)
    wanted = [t for t in SESSION.threads() if t.is_valid() and tids_map.to_target(t.ptid[1]) in own]
    return snapshot_threads(depth, threads=wanted, native=native)


def listed_twice(thread):
    """The GdbThread of a thread gdb lists twice (its entry without
    registers), saying so; None for any other thread."""
    tids = target_tids()
    return _listed_twice(thread, tids) if tids.listed_twice(thread.ptid[1]) else None


def _listed_twice(thread, tids):
    own = thread.ptid[1]
    return GdbThread(num=thread.num, tid=own, name=thread.name, host_tid=tids.to_host(own),
                     problem=[ThreadIssue(ThreadIssueKind.LISTED_TWICE, number=own, other=tids.to_host(own))])


def target_fields(target):
    """What gdb knows of the target, as the fields of its TargetFacts (native_facts.Collector.target_facts):
    kind, pid, core, executable, namespace_pid, parent_pid."""
    inferior = gdb.selected_inferior()
    pid = target.pid or inferior.pid or None
    fields = {"kind": target.kind, "pid": pid, "core": None, "executable": target.executable or
              gdb.current_progspace().filename, "namespace_pid": target_tids().pid, "parent_pid": None}
    if target.kind == "core":
        fields.update(core=core_path(), parent_pid=target.parent_pid)
    elif pid:
        fields["parent_pid"] = procfs.parent_pid(pid)
    return fields


def target_warnings(target):
    """What about the target could not be read or trusted: data
    (model.kinds.TargetWarning and what it names), worded by render.target."""
    return list(target.warnings) + executable_warnings(target) + sysroot_warnings(target) + \
        zeroed_stack_warnings(target)


def executable_warnings(target):
    """gdb's idea of the executable against the target's own record."""
    given = gdb.current_progspace().filename
    if given is not None and given.startswith("target:"):  # gdb reads it through the target: the same file
        given = given[len("target:"):]
    if given is None:
        return [TargetIssue(TargetWarning.NO_EXECUTABLE_GIVEN)]
    if target.executable and os.path.realpath(given) != os.path.realpath(target.executable):
        return [TargetIssue(TargetWarning.OTHER_EXECUTABLE, given=given, path=target.executable)]
    return []


def sysroot_warnings(target):
    """Cores: a hint when most of the files the core's process mapped are
    missing here or are other builds (their build-ids differ), as for a core
    made in a container or on another machine, and no sysroot was given."""
    if target.kind != "core" or gdb.parameter("sysroot") not in ("", "target:", None):
        return []
    objects = [o for o in target.objects() if o.path.startswith("/")]
    lost = [o for o in objects if o.problem]
    if not objects or len(lost) * 2 < len(objects):
        return []
    return [TargetIssue(TargetWarning.FILES_MISSING, number=len(lost), other=len(objects))]


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
    return [TargetIssue(TargetWarning.ZEROED_STACKS, tids=lost)]


def selected_thread(depth):
    """(ThreadSnapshot with lock facts, PythonView) of the selected thread."""
    thread = selected_gdb_thread()
    view = PythonView(decoders.python_state())
    snap = gather.thread_snapshot(thread_facts(snapshot_selected(thread, depth, decoders.native_stacks())))
    return snap, view

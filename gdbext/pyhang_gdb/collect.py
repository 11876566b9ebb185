"""What gdb knows: the threads, and for each the registers of frame 0 and
the pcs of its top frames.

Registers and pcs come from the native library when it can give them: frame
0's registers from the core, or live through ptrace (gdb is the tracer), and
pcs from its .eh_frame unwinder.  That needs no thread switch and no gdb
frame objects.  Where the native side cannot (a target read through gdb, a
frame without CFI, an expression it does not evaluate), gdb selects the
thread and its own unwinder walks the frames, with no debug info either way.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import gdb

# Registers the lock and GIL decoders look at in frame 0: the system call
# (orig_rax) and its arguments (the futex word, op and expected value).
# fs_base is the thread's own struct pthread (x86_64 TLS): it tells which
# thread a pthread_join waits for.
FRAME0_REGISTERS = ("orig_rax", "rdi", "rsi", "rdx", "fs_base")


_NOT_ON_THE_STACK = (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)


@dataclass
class ThreadSnapshot:
    num: int
    tid: int
    name: Optional[str]
    registers: Dict[str, int] = field(default_factory=dict)
    pcs: List[int] = field(default_factory=list)   # frame 0 first
    problem: Optional[str] = None
    unwound_by: str = "gdb"  # or "pyhang": who found registers and pcs


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
    snap = ThreadSnapshot(num=thread.num, tid=thread.ptid[1] or thread.ptid[0], name=thread.name)
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
    return ThreadSnapshot(num=thread.num, tid=tid, name=thread.name, pcs=pcs, unwound_by="pyhang",
                          registers={r: regs[r] for r in FRAME0_REGISTERS if r in regs})


def snapshot_selected(thread, depth, native=None):
    """Snapshot of the selected thread: natively when possible, else from gdb's frames."""
    return native_snapshot(thread, depth, native) or snapshot_current(thread, depth)


def snapshot_thread(thread, depth, native=None):
    """Snapshot of one thread, natively when possible, else by selecting it
    in gdb (the caller restores the selection: see SelectionKept)."""
    snap = native_snapshot(thread, depth, native)
    if snap is not None:
        return snap
    try:
        thread.switch()
    except gdb.error as exc:
        return ThreadSnapshot(num=thread.num, tid=thread.ptid[1], name=None,
                              problem="cannot select thread: %s" % (exc,))
    return snapshot_current(thread, depth)


def snapshot_threads(depth, threads=None, native=None):
    """Snapshots of every thread of the selected inferior, in gdb's order."""
    threads = threads if threads is not None else gdb.selected_inferior().threads()
    out = []
    with SelectionKept():
        for t in sorted(threads, key=lambda t: t.num):
            if t.is_valid():
                out.append(snapshot_thread(t, depth, native))
    return out

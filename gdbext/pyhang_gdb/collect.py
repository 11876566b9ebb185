"""What only gdb knows cheaply: the threads, the registers of each thread's
frame 0 and the pcs of its top frames (gdb's unwinder works from .eh_frame,
with no debug info).  Everything else is decoded by the native library.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import gdb

# Registers the lock and GIL decoders look at in frame 0: the system call
# (orig_rax) and its arguments (the futex word, op and expected value).
# fs_base is the thread's own struct pthread (x86_64 TLS): it tells which
# thread a pthread_join waits for.
FRAME0_REGISTERS = ("orig_rax", "rdi", "rsi", "rdx", "fs_base")


@dataclass
class ThreadSnapshot:
    num: int
    tid: int
    name: Optional[str]
    registers: Dict[str, int] = field(default_factory=dict)
    pcs: List[int] = field(default_factory=list)   # frame 0 first
    problem: Optional[str] = None


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
            # Inlined calls (known only from debug info) share their caller's pc:
            # list each machine frame once, as on a stripped binary.
            if frame.type() != gdb.INLINE_FRAME:
                snap.pcs.append(int(frame.pc()))
            frame = frame.older()
    except gdb.error as exc:
        snap.problem = "cannot unwind: %s" % (exc,)
    return snap


def snapshot_threads(depth, threads=None):
    """Snapshots of every thread of the selected inferior, in gdb's order."""
    threads = threads if threads is not None else gdb.selected_inferior().threads()
    out = []
    with SelectionKept():
        for t in sorted(threads, key=lambda t: t.num):
            try:
                if not t.is_valid():
                    continue
                t.switch()
            except gdb.error as exc:
                out.append(ThreadSnapshot(num=t.num, tid=t.ptid[1], name=None,
                                          problem="cannot select thread: %s" % (exc,)))
                continue
            out.append(snapshot_current(t, depth))
    return out

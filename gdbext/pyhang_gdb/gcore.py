"""A core of the stopped process that keeps what gdb's own gcore loses
(`pyhang gcore`, pyhang_gdb.commands.gcore): every thread's stack, and
what /proc knows of the process that a core cannot hold.

gdb 13's gcore reads a mapping in chunks and writes the rest of its segment
as zeros from the first chunk it cannot read.  glibc 2.42+ starts every
thread stack with a guard page (madvise(MADV_GUARD_INSTALL), Linux 6.13+)
that no one can read, so gcore loses every thread stack.  Each segment whose
first page cannot be read is read again page by page, the unreadable pages
(the guard pages) left as zeros, as the kernel's own core writer stores
them.  The process is still stopped, so the copy is the memory gcore's
registers belong to.  Then, still stopped, /proc is read
(pyhang.proc_record.collect) and kept in the core as one more note
(pyhang.proc_record.write), and the notes are moved before the memory, as
the kernel lays out a core: gdb's gcore writes them last, so any cut of the
file loses every thread (pyhang.core_notes.notes_first)."""
import gdb

from pyhang import core_notes, proc_record

PAGE = 4096
KERNEL_SPACE = 0xffff800000000000   # the [vsyscall] page: no process reads it, and gcore wrote it whole


def _page(inferior, at):
    try:
        return bytes(inferior.read_memory(at, PAGE))
    except gdb.MemoryError:
        return None


def complete(path):
    """Fills the PT_LOAD segments of core `path` whose first page the selected (stopped) inferior
    cannot be read at, page by page; returns how many pages were filled."""
    inferior = gdb.selected_inferior()
    filled = 0
    with open(path, "r+b") as core:
        for s in core_notes.segments(core):
            if s.type != core_notes.PT_LOAD or not s.filesz or s.vaddr >= KERNEL_SPACE or \
                    _page(inferior, s.vaddr) is not None:
                continue   # read whole by gcore
            for at in range(s.vaddr, s.vaddr + s.filesz, PAGE):
                data = _page(inferior, at)
                if data is not None:
                    core.seek(s.offset + at - s.vaddr)
                    core.write(data[:s.vaddr + s.filesz - at])
                    filled += 1
    return filled


def write_core(path, pid, record=True):
    """Writes the core of the selected inferior, live process `pid` (stopped), to `path`: gdb's gcore,
    the segments it left as zeros read again (complete), and with `record` the record of /proc added
    as a note.  (pages filled, the record's data or None)."""
    gdb.execute("gcore " + path, to_string=True)
    filled = complete(path)
    data = None
    if record:
        data = proc_record.collect(pid)
        proc_record.write(path, data)
        core_notes.notes_first(path)   # as the kernel writes a core: a cut one keeps its threads
    return filled, data

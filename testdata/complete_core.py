"""Run inside gdb, attached to the process a core was just made of with
`gcore` and still stopped: completes the core's segments that gcore left as
zeros because their first page cannot be read.

gdb 13's gcore reads a mapping in chunks and leaves the rest of its segment
as zeros at the first chunk it cannot read.  glibc 2.42+ starts every thread
stack with a guard page (madvise(MADV_GUARD_INSTALL), Linux 6.13+) that no
one can read, so gcore loses every thread stack.  Each such segment is read
again page by page, the guard pages left as zeros, as the kernel's own core
writer stores them; the process is still stopped, so the copy is the memory
gcore's registers belong to.  Used by testdata/harness.py's gcore()."""
import struct

import gdb

PAGE = 4096


def segments(path):
    """[(file offset, vaddr, file size)] of a core's PT_LOAD segments."""
    with open(path, "rb") as f:
        head = f.read(64)
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    out = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if p_type == 1 and p_filesz:
            out.append((p_offset, p_vaddr, p_filesz))
    return out


def readable(inferior, at):
    try:
        return bytes(inferior.read_memory(at, PAGE))
    except gdb.MemoryError:
        return None


def complete(path):
    """Fills the segments of `path` whose first page the process cannot be read at."""
    inferior = gdb.selected_inferior()
    filled = 0
    with open(path, "r+b") as core:
        for offset, vaddr, size in segments(path):
            if vaddr >= 0xffff800000000000 or readable(inferior, vaddr) is not None:
                continue  # read whole by gcore (the kernel's [vsyscall] page no one reads)
            for at in range(vaddr, vaddr + size, PAGE):
                data = readable(inferior, at)
                if data is not None:
                    core.seek(offset + at - vaddr)
                    core.write(data[:vaddr + size - at])
                    filled += 1
    print("complete_core: %d pages filled" % filled)

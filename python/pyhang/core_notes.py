"""An ELF core file's program headers and notes, in plain Python (no
native module, no gdb): the segments a core holds, the notes of its
PT_NOTE segments, and one more note added to a core.

Only x86_64 cores are read (64-bit, little-endian).  A core's program
header table says where each segment is in the file: gdb's gcore writes the
memory (PT_LOAD) first and its notes after, the kernel the notes first.
`add_note` copies the last PT_NOTE segment to the end of the file with the
new note after the ones it held, and points that segment's program header
at the copy: one program header changes (its offset and size), every other
byte of the core stays where it was, and the core's readers (gdb's BFD, the
kernel's tools, pyhang's own) read the note with the others.  A note type
no reader knows is skipped by each of them.
"""
import os
import struct

from pyhang.render.failures import truncated_core

PT_LOAD, PT_NOTE = 1, 4
PN_XNUM = 0xFFFF           # e_phnum when the count is in section 0's sh_info
_PHDR = struct.Struct("<IIQQQQQQ")   # p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align
MAX_NOTES = 64 << 20       # bytes of a PT_NOTE segment read at most


class NotACore(Exception):
    """The file is no 64-bit little-endian ELF core, or its headers are cut short."""


class Segment:
    """One program header: its index in the table, type, where its bytes are in the file and where in memory."""
    __slots__ = ("index", "type", "offset", "vaddr", "filesz", "memsz")

    def __init__(self, index, type, offset, vaddr, filesz, memsz):
        self.index, self.type, self.offset, self.vaddr, self.filesz, self.memsz = \
            index, type, offset, vaddr, filesz, memsz


def _header(f):
    """(e_phoff, e_phentsize, e_phnum) of an open core file."""
    f.seek(0)
    head = f.read(64)
    if len(head) < 64 or head[:4] != b"\x7fELF":
        raise NotACore("no ELF header")
    if head[4] != 2 or head[5] != 1 or struct.unpack_from("<H", head, 16)[0] != 4:
        raise NotACore("not a 64-bit little-endian core file")
    phoff, = struct.unpack_from("<Q", head, 32)
    phentsize, phnum = struct.unpack_from("<HH", head, 54)
    if phnum == PN_XNUM:   # the count is section 0's sh_info
        shoff, = struct.unpack_from("<Q", head, 40)
        f.seek(shoff + 44)
        raw = f.read(4)
        if len(raw) < 4:
            raise NotACore("the program header count's section is cut short")
        phnum, = struct.unpack("<I", raw)
    if phentsize < _PHDR.size:
        raise NotACore("program headers of %d bytes" % phentsize)
    return phoff, phentsize, phnum


def segments(f):
    """[Segment] of an open core file, in the table's order; NotACore when it has no whole table."""
    phoff, phentsize, phnum = _header(f)
    f.seek(phoff)
    table = f.read(phentsize * phnum)
    if len(table) < phentsize * phnum:
        raise NotACore("the program header table is cut short")
    out = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, p_memsz, _ = _PHDR.unpack_from(table, i * phentsize)
        out.append(Segment(i, p_type, p_offset, p_vaddr, p_filesz, p_memsz))
    return out


def _pad(n):
    return (n + 3) & ~3


def notes(data):
    """[(name, type, desc, start, end)] of the notes in a PT_NOTE segment's bytes (start, end: where
    each note is in `data`); a note cut short ends the list."""
    out, at = [], 0
    while at + 12 <= len(data):
        namesz, descsz, kind = struct.unpack_from("<III", data, at)
        name_at = at + 12
        desc_at = name_at + _pad(namesz)
        end = desc_at + _pad(descsz)
        if desc_at + descsz > len(data):
            break
        name = data[name_at:name_at + namesz].rstrip(b"\0").decode("latin-1")
        out.append((name, kind, data[desc_at:desc_at + descsz], at, min(end, len(data))))
        at = end
    return out


def note_bytes(name, kind, desc):
    """One ELF note: its header, its name (NUL-ended) and its desc, each padded to 4 bytes."""
    raw = name.encode("latin-1") + b"\0"
    return struct.pack("<III", len(raw), len(desc), kind) + raw.ljust(_pad(len(raw)), b"\0") + \
        desc.ljust(_pad(len(desc)), b"\0")


def note_segments(f):
    """[(Segment, its bytes)] of an open core file's PT_NOTE segments (each read up to MAX_NOTES bytes)."""
    out = []
    for s in segments(f):
        if s.type == PT_NOTE and s.filesz:
            f.seek(s.offset)
            out.append((s, f.read(min(s.filesz, MAX_NOTES))))
    return out


def digest(data):
    import hashlib   # here: a live process's report (proc_record imports this module) digests no core
    return hashlib.sha256(data).hexdigest()


def last_notes(path):
    """(file size, bytes of the last PT_NOTE segment) of core `path`: what add_note will copy."""
    with open(path, "rb") as f:
        found = note_segments(f)
        size = os.fstat(f.fileno()).st_size
    if not found:
        raise NotACore("no PT_NOTE segment")
    return size, found[-1][1]


def add_note(path, name, kind, desc):
    """Adds one note to core `path`: its last PT_NOTE segment, copied to the end of the file (8-byte
    aligned) with the note after the ones it held.  Returns the offset of the copy."""
    with open(path, "r+b") as f:
        found = note_segments(f)
        if not found:
            raise NotACore("no PT_NOTE segment")
        segment, data = found[-1]
        if len(data) < segment.filesz:
            raise NotACore("its notes are cut short")
        phoff, phentsize, _ = _header(f)
        end = f.seek(0, os.SEEK_END)
        at = (end + 7) & ~7
        grown = data + note_bytes(name, kind, desc)
        f.write(b"\0" * (at - end) + grown)
        f.seek(phoff + segment.index * phentsize + 8)      # p_offset
        f.write(struct.pack("<Q", at))
        f.seek(phoff + segment.index * phentsize + 32)     # p_filesz
        f.write(struct.pack("<Q", len(grown)))
    return at


def _copy(src, dst, count, at_src, at_dst):
    """`count` bytes of file `src` from `at_src` to file `dst` at `at_dst` (in the kernel where it can)."""
    while count > 0:
        try:
            n = os.copy_file_range(src, dst, min(count, 1 << 30), at_src, at_dst)
        except OSError:
            n = 0
        if n <= 0:   # another file system, or a kernel without it: through this process
            data = os.pread(src, min(count, 1 << 24), at_src)
            if not data:
                raise NotACore("the core ends before its memory does")
            n = os.pwrite(dst, data, at_dst)
        count, at_src, at_dst = count - n, at_src + n, at_dst + n


def notes_first(path):
    """Rewrites core `path` with its notes right after the program header table and its memory after
    them, as the kernel lays out a core: a core cut short (a full disk, a copy stopped) still has its
    threads, their registers and its mapped files, with the memory it kept.  gdb's gcore writes the notes
    last, where every cut loses them.  The memory keeps its place within a page; the section headers (gdb's
    copy of what the program headers say) are left out, as the kernel leaves them out.  Returns the
    notes' new offset."""
    PAGE = 4096
    with open(path, "rb") as f:
        segments_ = segments(f)
        phoff, phentsize, phnum = _header(f)
        f.seek(0)
        head = bytearray(f.read(64))
        f.seek(phoff)
        table = bytearray(f.read(phentsize * phnum))
        notes_ = []
        for s in segments_:
            if s.type == PT_NOTE and s.filesz:
                f.seek(s.offset)
                notes_.append((s, f.read(s.filesz)))
        size = os.fstat(f.fileno()).st_size
    if phnum >= PN_XNUM or phoff != 64:
        raise NotACore("a program header table pyhang does not move notes before (%d entries at %d)" % (phnum, phoff))
    if any(len(data) < s.filesz for s, data in notes_):
        raise NotACore("its notes are cut short")
    loads = [s for s in segments_ if s.type != PT_NOTE and s.filesz]
    start = min((s.offset for s in loads), default=size)
    end = max((s.offset + s.filesz for s in loads), default=start)
    at = (phoff + phentsize * phnum + 7) & ~7
    placed = {}
    for s, data in notes_:
        placed[s.index] = at
        at = (at + len(data) + 7) & ~7
    shift = max(0, at - start + PAGE - 1) // PAGE * PAGE
    for s in segments_:
        offset = placed.get(s.index, s.offset + shift if s.filesz and s.type != PT_NOTE else s.offset)
        struct.pack_into("<Q", table, s.index * phentsize + 8, offset)
    struct.pack_into("<Q", head, 40, 0)            # e_shoff: no section headers
    struct.pack_into("<HHH", head, 58, 0, 0, 0)    # e_shentsize, e_shnum, e_shstrndx
    tmp = path + ".pyhang-notes-first"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, os.stat(path).st_mode & 0o777)
    try:
        with open(path, "rb") as src:
            os.pwrite(fd, bytes(head) + bytes(table), 0)
            for s, data in notes_:
                os.pwrite(fd, data, placed[s.index])
            _copy(src.fileno(), fd, end - start, start, start + shift)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    return min(placed.values(), default=0)


_ELF_TYPES = {1: "an object file", 2: "an executable", 3: "a shared object or PIE executable"}


def core_problem(path):
    """Why `path` cannot be a core file, from the file itself (its ELF
    header and program headers), or None when it looks whole."""
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF":
                return "%s is not a core file: it has no ELF header" % path
            e_type, = struct.unpack_from("<H", head, 16)
            if e_type != 4:
                return "%s is %s, not a core file" % (path, _ELF_TYPES.get(e_type, "an ELF file of type %d" % e_type))
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            need = phoff + phentsize * phnum
            notes_end = 0
            if size >= need and phentsize >= 40:
                f.seek(phoff)
                table = f.read(phentsize * phnum)
                for i in range(phnum):
                    p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
                    need = max(need, p_offset + p_filesz)
                    if p_type == 4:   # PT_NOTE
                        notes_end = max(notes_end, p_offset + p_filesz)
    except FileNotFoundError:
        return "%s does not exist" % path
    except OSError as exc:
        return "%s cannot be read: %s" % (path, exc.strerror or exc)
    if size < need:
        return truncated_core(path, size, need, notes_lost=size < notes_end)
    return None


# gdb's options that take a value as the next argument (gdb --help), the core's among them.
_CORE_OPTIONS = ("-c", "-core", "--core")
_VALUE_OPTIONS = _CORE_OPTIONS + ("-p", "-pid", "--pid", "-x", "-command", "--command", "-ex", "--eval-command",
                                  "-iex", "--init-eval-command", "-ix", "--init-command", "-se", "-s", "-symbols",
                                  "--symbols", "-e", "-exec", "--exec", "-d", "-directory", "--directory", "-cd",
                                  "--cd", "-b", "-l", "-D", "--data-directory", "-data-directory", "-tty", "--tty")


def core_in_gdb_arguments(argv):
    """The core file gdb's command line `argv` names (-c FILE, --core=FILE, or the second file after the
    executable that is no process id), or None."""
    positional, args = [], iter(argv[1:])
    for a in args:
        if a == "--args":
            break
        name, eq, value = a.partition("=")
        if name in _CORE_OPTIONS:
            return value if eq else next(args, None)
        if a in _VALUE_OPTIONS:
            next(args, None)
        elif not a.startswith("-"):
            positional.append(a)
    return positional[1] if len(positional) > 1 and not positional[1].isdigit() else None

"""The words of what about a target could not be read or trusted: the
warnings the native target reader, the gdb collector and the no-stop
collector give (model.warning_facts.TargetIssue: a model.kinds.TargetWarning
and the paths, numbers and threads it names), and the interpreter reader's
(StateIssue, render.interpreter)."""
import os

from pyhang.model.kinds import ReaderFailure, TargetWarning
from pyhang.render.interpreter import state_warning_text
from pyhang.render.unread import unread_text

_WORDS = {
    TargetWarning.SYMBOLS_UNREADABLE: lambda w: "cannot read symbols of %s: %s" % (w.path, object_problem_text(w)),
    TargetWarning.BUILD_ID_MISMATCH: lambda w: "cannot read symbols of %s: %s" % (w.path, object_problem_text(w)),
    TargetWarning.CORE_TRUNCATED: lambda w: (
        "core file %s is truncated: %d of %d bytes of memory are missing; what they held is unknown (no file "
        "stands in for them), and what is read from elsewhere still holds" % (w.path, w.number, w.other)),
    TargetWarning.CORE_FILES_MALFORMED: lambda w: "core file %s: the NT_FILE note is malformed; mapped files "
                                                  "unknown" % w.path,
    TargetWarning.CORE_NO_THREAD: lambda w: "core file %s has no thread (no NT_PRSTATUS note)" % w.path,
    TargetWarning.CORE_NO_FILES: lambda w: "core file %s lists no mapped files (no NT_FILE note); symbols are "
                                           "unavailable" % w.path,
    TargetWarning.NO_EXECUTABLE_GIVEN: lambda w: "gdb was given no executable; pyhang reads symbols from the files "
                                                 "the target mapped",
    TargetWarning.OTHER_EXECUTABLE: lambda w: (
        "gdb was given the executable %s, but the target runs %s: gdb's own frames may be wrong; pyhang reads %s"
        % (w.given, w.path, w.path)),
    TargetWarning.FILES_MISSING: lambda w: (
        "%d of the %d files the core's process mapped are missing here or are other builds: it ran in a container "
        "or on another machine; pass --sysroot /proc/PID/root (PID: a process still running in that container) or "
        "the container's root (in gdb: set sysroot DIR, before the core is loaded)" % (w.number, w.other)),
    TargetWarning.ZEROED_STACKS: lambda w: _zeroed_stacks(w.tids),
    TargetWarning.NOT_STOPPED: lambda w: ("taken without stopping the process: threads that were running are shown "
                                          "as running, and what they hold may change while it is read"),
    TargetWarning.NOT_STOPPED_FOR_TRANSFER: lambda w: (
        "not stopped because LWP %d is inside %s on fd %d (%s): a stop would cut the transfer short and the "
        "program could lose what it had not written yet (--stop stops it anyway)" % (
            w.tid, w.call, w.fd, w.what)),
    TargetWarning.THREADING_INCOMPLETE: lambda w: (
        "threading's Thread objects could not all be read (%s): thread names and joins may be missing"
        % unread_text(w.problem)),
    TargetWarning.ASYNCIO_INCOMPLETE: lambda w: (
        "asyncio's tasks could not all be read (%s): tasks and what they await may be missing"
        % unread_text(w.problem)),
    TargetWarning.PROC_RECORD_DAMAGED: lambda w: (
        "the record of /proc that pyhang gcore kept in core file %s is damaged (%s): it is not used, and the fd "
        "table, the system calls and the children are not known, as for a core without one" % (w.path, w.text)),
    TargetWarning.PROC_RECORD_OTHER_VERSION: lambda w: (
        "the record of /proc in core file %s is %s (written by pyhang %s), which this pyhang does not read (it reads "
        "%s): it is not used, and the fd table, the system calls and the children are not known, as for a core "
        "without one" % (w.path, w.text or "of no schema", w.given or "?", w.other_text)),
    TargetWarning.PROC_RECORD_OTHER_CORE: lambda w: _other_core(w),
    TargetWarning.GIL_MOVED: lambda w: ("the GIL changed hands while the process was read without stopping it: "
                                        "which thread holds it is not known"),
}


_FAILURES = {
    ReaderFailure.OTHER: lambda path, n: "cannot read %s" % path,
    ReaderFailure.CANNOT_OPEN: lambda path, n: "cannot open %s: %s" % (path, os.strerror(n)),
    ReaderFailure.CANNOT_MAP: lambda path, n: "cannot map %s: %s" % (path, os.strerror(n)),
    ReaderFailure.MAPS_UNREADABLE: lambda path, n: "cannot read %s" % path,
    ReaderFailure.NOT_REGULAR_FILE: lambda path, n: "%s is not a regular file" % path,
    ReaderFailure.NOT_ELF: lambda path, n: "%s is not an ELF file" % path,
    ReaderFailure.UNSUPPORTED_ELF: lambda path, n: "%s is not a 64-bit little-endian x86_64 ELF file" % path,
    ReaderFailure.NOT_CORE: lambda path, n: "%s is not a core file" % path,
    ReaderFailure.NO_SUCH_PROCESS: lambda path, n: "process %d does not exist" % n,
    ReaderFailure.NOT_CODE_OBJECT: lambda path, n: "%s is not a code object" % path,
    ReaderFailure.NOT_FOUND: lambda path, n: "%s not found" % path,
    ReaderFailure.UNSUPPORTED: lambda path, n: "%s is not supported" % path,
}


def reader_failure(reason, path, number=0):
    """Why a target or file could not be opened: a ReaderError's reason (model.kinds.ReaderFailure, or the
    native enum), path and number in words."""
    name = getattr(reason, "text", reason)
    words = _FAILURES.get(name)
    try:
        return words(path, number) if words else "%s: %s" % (name, path)
    except (TypeError, ValueError, OverflowError):   # data another pyhang wrote, or damaged: said by its names
        return "%s: %s" % (name, path)


def reader_error_text(exc):
    """A native ReaderError in words (its str() is only the reason's name and the path); another
    exception as str() says it."""
    if not hasattr(exc, "reason") or not hasattr(exc, "path"):
        return str(exc)
    return reader_failure(exc.reason, exc.path, getattr(exc, "number", 0))


def object_problem_text(w):
    """Why a mapped file's symbols are not used (a mapped object's problem, the target's
    executable_problem): a TargetIssue."""
    if w.kind == TargetWarning.BUILD_ID_MISMATCH:
        return ("the file on disk is not the one the core was made from (build-id %s, in the core %s); its "
                "symbols are not used" % (w.text or "?", w.other_text or "?"))
    if w.text in _FAILURES:
        return reader_failure(w.text, w.other_text or w.path or "?", w.number or 0)
    return w.text or w.kind


def _other_core(w):
    if w.number != w.other:
        whose = "was recorded of process %d, but the core is of process %d" % (w.number, w.other)
    else:
        whose = "was recorded for another core of process %d (%s; this core: %s)" % (
            w.number, w.text, w.other_text)
    return ("the record of /proc in core file %s %s: it is not used, and the fd table, the system calls and the "
            "children are not known, as for a core without one" % (w.path, whose))


def _zeroed_stacks(tids):
    one = len(tids) == 1
    return ("the core holds only zeros at the stack pointer of %d thread%s (LWP %s): what wrote it could not read "
            "%s stack (gdb's gcore cannot read a mapping that starts with a guard page, which glibc 2.42+ puts at "
            "the start of every thread stack on Linux 6.13+); %s native frames, and on CPython 3.12+ the Python "
            "frames of C calls, are lost. A core the kernel writes (ulimit -c, then SIGABRT), or the live "
            "process, has them" % (len(tids), "" if one else "s",
                                   ", ".join(str(t) for t in tids[:8]) + (", ..." if len(tids) > 8 else ""),
                                   "its" if one else "their", "its" if one else "their"))


# What FILES_MISSING says for every file at once: the warnings of each file that is missing or another
# build, and that gdb was given no executable (it is one of them), which the text leaves out beside it.
_PER_FILE = (TargetWarning.SYMBOLS_UNREADABLE, TargetWarning.BUILD_ID_MISMATCH, TargetWarning.NO_EXECUTABLE_GIVEN)


def files_missing(warnings):
    """Whether the target's warnings say most of a core's files are not here (a container's, another machine's)."""
    return any(getattr(w, "kind", None) == TargetWarning.FILES_MISSING for w in warnings)


def folded(warnings):
    """The warnings a person reads: with FILES_MISSING, its one line of advice stands for each file's own."""
    if not files_missing(warnings):
        return list(warnings)
    return [w for w in warnings if getattr(w, "kind", None) not in _PER_FILE]


def warning_text(w):
    """One warning in words: a TargetIssue, or the interpreter reader's StateIssue (render.interpreter); a
    line as it is."""
    if isinstance(w, str):
        return w
    words = _WORDS.get(w.kind)
    try:
        said = words(w) if words else state_warning_text(w)
    except (TypeError, ValueError):   # data another pyhang wrote, or damaged: said as it is
        said = None
    return said or "%s: %s" % (w.kind, getattr(w, "path", "") or w.text or "")

"""The words of what about a target could not be read or trusted: the
warnings the native target reader, the gdb collector and the no-stop
collector give as data ({kind: model.kinds.TargetWarning, and the paths,
numbers and threads it names}).  A warning that is a string (an older
snapshot's, or the interpreter reader's own) is shown as it is."""
from pyhang.model.kinds import TargetWarning
from pyhang.render.interpreter import state_warning_text

_WORDS = {
    TargetWarning.SYMBOLS_UNREADABLE: lambda w: "cannot read symbols of %s: %s" % (w["path"], w["text"]),
    TargetWarning.CORE_TRUNCATED: lambda w: (
        "core file %s is truncated: %d of %d bytes of memory are missing; what they held is unknown (no file "
        "stands in for them), and what is read from elsewhere still holds" % (w["path"], w["number"], w["other"])),
    TargetWarning.CORE_FILES_MALFORMED: lambda w: "core file %s: the NT_FILE note is malformed; mapped files "
                                                  "unknown" % w["path"],
    TargetWarning.CORE_NO_THREAD: lambda w: "core file %s has no thread (no NT_PRSTATUS note)" % w["path"],
    TargetWarning.CORE_NO_FILES: lambda w: "core file %s lists no mapped files (no NT_FILE note); symbols are "
                                           "unavailable" % w["path"],
    TargetWarning.NO_EXECUTABLE_GIVEN: lambda w: "gdb was given no executable; pyhang reads symbols from the files "
                                                 "the target mapped",
    TargetWarning.OTHER_EXECUTABLE: lambda w: (
        "gdb was given the executable %s, but the target runs %s: gdb's own frames may be wrong; pyhang reads %s"
        % (w["given"], w["path"], w["path"])),
    TargetWarning.FILES_MISSING: lambda w: (
        "%d of the %d files the core's process mapped are missing here or are other builds: a core made in a "
        "container or on another machine is read with the files of its own root file system, given with "
        "--sysroot DIR (in gdb: set sysroot DIR, before the core is loaded)" % (w["number"], w["other"])),
    TargetWarning.ZEROED_STACKS: lambda w: _zeroed_stacks(w["tids"]),
    TargetWarning.NOT_STOPPED: lambda w: ("taken without stopping the process: threads that were running are shown "
                                          "as running, and what they hold may change while it is read"),
    TargetWarning.NOT_STOPPED_FOR_TRANSFER: lambda w: (
        "not stopped because LWP %d is inside %s on fd %d (%s): a stop would cut the transfer short and the "
        "program could lose what it had not written yet (--stop stops it anyway)" % (
            w["tid"], w["call"], w["fd"], w["what"])),
    TargetWarning.GIL_MOVED: lambda w: ("the GIL changed hands while the process was read without stopping it: "
                                        "which thread holds it is not known"),
}


def _zeroed_stacks(tids):
    one = len(tids) == 1
    return ("the core holds only zeros at the stack pointer of %d thread%s (LWP %s): what wrote it could not read "
            "%s stack (gdb's gcore cannot read a mapping that starts with a guard page, which glibc 2.42+ puts at "
            "the start of every thread stack on Linux 6.13+); %s native frames, and on CPython 3.12+ the Python "
            "frames of C calls, are lost. A core the kernel writes (ulimit -c, then SIGABRT), or the live "
            "process, has them" % (len(tids), "" if one else "s",
                                   ", ".join(str(t) for t in tids[:8]) + (", ..." if len(tids) > 8 else ""),
                                   "its" if one else "their", "its" if one else "their"))


def warning_text(w):
    """One warning in words: a TargetWarning's data, the interpreter reader's
    (render.interpreter), or a string as it is."""
    if isinstance(w, str):
        return w
    if not isinstance(w, dict):
        return str(w)
    words = _WORDS.get(w.get("kind"))
    try:
        said = words(w) if words else state_warning_text(w)
    except (KeyError, TypeError, ValueError):   # data another pyhang wrote, or damaged: said as it is
        said = None
    return said or "%s: %s" % (w.get("kind"), w.get("path") or w.get("text") or "")

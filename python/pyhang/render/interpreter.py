"""The words of what about the interpreter's state could not be read or
trusted: the native reader's warnings (model.warning_facts.StateIssue: a
model.kinds.StateWarning, address, other, expected, number, count, text,
text2, text3, notes, changes)."""
from pyhang.model.kinds import StateWarning as S
from pyhang.render.unread import unread_text

_WITHOUT_GIL_WAITERS = "threads waiting for the GIL will not be recognised"


def _fallback(w, why):
    """A _Py_DebugOffsets problem: refused (nothing to fall back on), or the generated table used."""
    if w.count:
        return "%s; no layout table for CPython %s to fall back on" % (why, w.text2)
    return "%s; using the generated %s table" % (why, w.text3)


# What of the GIL was not decoded (the decoder's names; another is shown as it is).
_GIL_PIECES = {"mutex": "mutex", "condition-variable": "condition variable",
               "mutex+condition-variable": "mutex and condition variable"}


def _gil_statics(w):
    """The decoder's notes are ReadProblems."""
    notes = [unread_text(n) for n in w.notes or ()]
    said = "; GIL decode: " + "; ".join(notes) if notes else ""
    return "could not decode the GIL's %s in %s; %s%s" % (_GIL_PIECES.get(w.text2, w.text2), w.text,
                                                          _WITHOUT_GIL_WAITERS, said)


_WORDS = {
    S.NO_LAYOUT_TABLE: lambda w: "no layout table for CPython %s" % (w.text or "?"),
    S.DEBUG_OFFSETS_ONLY: lambda w: ("no layout table for CPython %s: read with its own _Py_DebugOffsets; what they "
                                     "do not cover is assumed as in %s" % (w.text, w.text2)),
    S.RUNTIME_UNREADABLE: lambda w: "interpreter runtime state at 0x%x unreadable" % w.address,
    S.TOO_MANY_INTERPRETERS: lambda w: "stopped after %d interpreters" % w.count,
    S.INTERPRETERS_LOOP: lambda w: "interpreter chain loops at 0x%x" % w.address,
    S.INTERPRETER_UNREADABLE: lambda w: "interpreter state at 0x%x unreadable" % w.address,
    S.INTERPRETER_ID_ODD: lambda w: "layout mismatch? interpreter 0x%x has id %d" % (w.address, w.number),
    S.MAIN_NOT_LISTED: lambda w: "layout mismatch? interpreters.main 0x%x not in the list" % w.address,
    S.MAIN_ID_NOT_ZERO: lambda w: "layout mismatch? main interpreter has id %d" % w.number,
    S.TOO_MANY_THREADS: lambda w: "interpreter %d: stopped after %d thread states" % (w.number, w.count),
    S.THREADS_LOOP: lambda w: "interpreter %d: thread state chain loops at 0x%x" % (w.number, w.address),
    S.THREAD_STATE_UNREADABLE: lambda w: ("interpreter %d: thread state at 0x%x unreadable; later threads not listed"
                                          % (w.number, w.address)),
    S.THREAD_OF_OTHER_INTERPRETER: lambda w: (
        "layout mismatch or corrupt thread list: thread state 0x%x ->interp = 0x%x, expected 0x%x; its threads not "
        "listed" % (w.address, w.other, w.expected)),
    S.THREAD_PREV_MISMATCH: lambda w: "thread state 0x%x ->prev = 0x%x, expected 0x%x" % (
        w.address, w.other, w.expected),
    S.CURRENT_NOT_LISTED: lambda w: "current thread state 0x%x is in no thread list" % w.address,
    S.GIL_UNREADABLE: lambda w: "GIL state at 0x%x unreadable" % w.address,
    S.GIL_LOCKED_ODD: lambda w: "layout mismatch? GIL at 0x%x has locked = %s" % (
        w.address, w.number if w.count else "?"),
    S.GIL_HOLDER_ODD: lambda w: "layout mismatch? GIL at 0x%x has last_holder 0x%x" % (w.address, w.other),
    S.NO_GIL_RELOCATIONS: lambda w: ("no relocations in %s to find the GIL's mutex and condition variable; %s"
                                     % (w.text, _WITHOUT_GIL_WAITERS)),
    S.GIL_STATICS_UNDECODED: _gil_statics,
    S.INTERP_HEAD_UNDECODED: lambda w: "could not decode PyInterpreterState_Head in %s to find interp_head" % w.text,
    S.VERSION_NOT_FOUND: lambda w: "CPython version of %s not found" % w.text,
    S.PATCH_NOT_FOUND: lambda w: "CPython patch version not found in %s; assuming the 3.%d layout" % (
        w.text, w.number),
    S.GIL_HOLDER_DISAGREES: lambda w: "GIL: last_holder 0x%x but current thread state 0x%x; trusting the latter" % (
        w.address, w.other),
    S.DEBUG_OFFSETS_UNREADABLE: lambda w: _fallback(w, "_Py_DebugOffsets unreadable"),
    S.DEBUG_OFFSETS_NO_COOKIE: lambda w: _fallback(w, "_PyRuntime does not start with the _Py_DebugOffsets cookie"),
    S.DEBUG_OFFSETS_VERSION: lambda w: _fallback(w, "_Py_DebugOffsets version %s is not %s" % (w.text, w.text2)),
    S.DEBUG_OFFSETS_IMPLAUSIBLE: lambda w: _fallback(
        w, "_Py_DebugOffsets implausible (offset %d beyond its struct)" % w.number),
    S.NO_RUNTIME: lambda w: ("no _PyRuntime to read _Py_DebugOffsets from, and no layout table for CPython 3.%d"
                             % w.number),
    S.FREE_THREADED: lambda w: ("a free-threaded build of CPython %s (Py_GIL_DISABLED): pyhang reads only default "
                                "(GIL) builds; native stacks and locks still hold" % w.text2),
    S.DEBUG_OFFSETS_DIFFER: lambda w: (
        "layout: the target's _Py_DebugOffsets differ from the generated %s table in %d fields (%s%s); using the "
        "target's" % (w.text3, w.number, w.text, ", ..." if w.number > 6 else "")),
    S.ASYNCIO_DEBUG_UNREADABLE: lambda w: "asyncio: %s at 0x%x unreadable; using the %s row" % (
        w.text3, w.address, w.text),
    S.ASYNCIO_DEBUG_IMPLAUSIBLE: lambda w: "asyncio: %s at 0x%x implausible (%s); using the %s row" % (
        w.text3, w.address, "%s unreadable" % w.text2 if w.number < 0 else
        "%s %d outside its struct of %d bytes" % (w.text2, w.number, w.count), w.text),
    S.ASYNCIO_DEBUG_DIFFER: lambda w: "asyncio: the target's %s differ from the %s row in %s; using the target's" % (
        w.text3, w.text, ", ".join("%s %d->%d" % (c.name, c.was, c.now) for c in w.changes)),
}


def state_warning_text(w):
    """One interpreter warning in words; None when its kind is not one of StateWarning's."""
    words = _WORDS.get(w.kind)
    return words(w) if words else None

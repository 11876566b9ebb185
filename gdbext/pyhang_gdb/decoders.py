"""The native decoders of the selected target, each made once per stop
(SESSION.cached): the interpreter (read once, shared by the CPython state,
the Python-lock search and fork facts), glibc's lock layouts, the unwinder.
They are pyhang.native_facts.Decoders kept in the stop's cache: the ones
gdb's collector (pyhang_gdb.facts) answers from."""
from pyhang.native_facts import Decoders
from pyhang_gdb import settings
from pyhang_gdb.session import SESSION


def stop_decoders():
    """The Decoders of the selected target, kept for this stop."""
    return Decoders(SESSION.target(), SESSION.cached)


def interpreter():
    """The target's interpreter, located and walked once per stop (threads,
    frames, GIL): what stacks, Python locks and fork facts all read."""
    return stop_decoders().interpreter()


def python_state():
    """The target's decoded CPython state (model.python_facts.PythonState of the Interpreter's state())."""
    return stop_decoders().python_state()


def lock_reader():
    """glibc version, lock layouts and pthread_t mapping of the target."""
    return stop_decoders().lock_reader()


def python_locks():
    """threading Lock/RLock/Condition lookup over the interpreter already read."""
    return stop_decoders().python_locks()


def native_stacks():
    """(Target, Unwinder) with which collect reads registers and unwinds
    without gdb, or None to have gdb unwind every thread
    (`set pyhang unwinder gdb`)."""
    if settings.value("unwinder") == "gdb":
        return None
    found = stop_decoders()
    return found.target, found.unwinder()


def python_values():
    """Python values as text and frame locals (native PythonValues), once per stop."""
    return stop_decoders().python_values()

"""The native decoders of the selected target, each made once per stop
(SESSION.cached): the interpreter (read once, shared by the CPython state,
the Python-lock search and fork facts), glibc's lock layouts, the unwinder."""
import _pyhang_native as native

from pyhang.model import python_facts
from pyhang_gdb import settings
from pyhang_gdb.session import SESSION


def interpreter():
    """The target's interpreter, located and walked once per stop (threads,
    frames, GIL): what stacks, Python locks and fork facts all read."""
    target = SESSION.target()
    return SESSION.cached("interpreter", lambda: native.Interpreter(target))


def python_state():
    """The target's decoded CPython state (model.python_facts.PythonState of the Interpreter's state())."""
    return SESSION.cached("python", lambda: python_facts.from_native(interpreter().state()))


def lock_reader():
    """glibc version, lock layouts and pthread_t mapping of the target."""
    target = SESSION.target()
    return SESSION.cached("locks", lambda: native.LockReader(target, None))


def python_locks():
    """threading Lock/RLock/Condition lookup over the interpreter already read."""
    return SESSION.cached("pylocks", lambda: native.PythonLocks(interpreter()))


def native_stacks():
    """(Target, Unwinder) with which collect reads registers and unwinds
    without gdb, or None to have gdb unwind every thread
    (`set pyhang unwinder gdb`)."""
    if settings.value("unwinder") == "gdb":
        return None
    target = SESSION.target()
    return target, SESSION.cached("unwinder", lambda: native.Unwinder(target))


def python_values():
    """Python values as text and frame locals (native PythonValues), once per stop."""
    return SESSION.cached("values", lambda: native.PythonValues(interpreter()))

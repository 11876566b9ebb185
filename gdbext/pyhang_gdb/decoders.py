"""The native decoders of the selected target, each made once per stop
(SESSION.cached): the interpreter (read once, shared by the CPython state,
the Python-lock search and fork facts), glibc's lock layouts, the unwinder."""
import time

import _pyhang_native as native

from pyhang import procfs
from pyhang_gdb import settings
from pyhang_gdb.session import SESSION


def interpreter():
    """The target's interpreter, located and walked once per stop (threads,
    frames, GIL): what stacks, Python locks and fork facts all read."""
    target = SESSION.target()
    return SESSION.cached("interpreter", lambda: native.Interpreter(target))


def python_state():
    """The target's decoded CPython state (the Interpreter's state() dict)."""
    return SESSION.cached("python", lambda: interpreter().state())


def lock_reader():
    """glibc version, lock layouts and pthread_t mapping of the target."""
    target = SESSION.target()
    return SESSION.cached("locks", lambda: native.LockReader(target, None))


def python_locks():
    """threading Lock/RLock/Condition lookup over the interpreter already read."""
    return SESSION.cached("pylocks", lambda: native.PythonLocks(interpreter()))


def threading():
    """threading's Thread objects (PythonLocks.threading()), once per stop."""
    return SESSION.cached("threading", lambda: python_locks().threading())


def asyncio():
    """asyncio's tasks, loops and executor jobs (native asyncio_state()), once per
    stop; live targets also note the host's monotonic clock, against which a
    sleep's deadline (loop time) is measured."""
    target = SESSION.target()

    def compute():
        state = native.asyncio_state(interpreter())
        if target.kind == "live":
            state["clock"] = time.monotonic()
        return state
    return SESSION.cached("asyncio", compute)


class Stop:
    """The target and the decoders a loop over many threads asks, fetched
    once for the loop (each function above checks the target per call)."""

    def __init__(self):
        self.target = SESSION.target()
        self.lock_reader = lock_reader()
        self._python_locks = None

    @property
    def python_locks(self):
        if self._python_locks is None:
            self._python_locks = python_locks()
        return self._python_locks


def native_stacks():
    """(Target, Unwinder) with which collect reads registers and unwinds
    without gdb, or None to have gdb unwind every thread
    (`set pyhang unwinder gdb`)."""
    if settings.value("unwinder") == "gdb":
        return None
    target = SESSION.target()
    return target, SESSION.cached("unwinder", lambda: native.Unwinder(target))


def fork_facts(own_bases):
    """What a fork child inherited (native fork_facts()), once per stop,
    without the large containers (fork_containers()); a dict naming the
    problem when the thread descriptors cannot be read.  A live target's
    has its /proc facts and its parent's too ("process": process_facts())."""
    target = SESSION.target()

    def compute():
        try:
            facts = native.fork_facts(target, sorted(own_bases), True, interpreter(), containers=False)
        except native.ReaderError as exc:
            return {"descriptor_problem": str(exc)}
        facts["process"] = process_facts(target.pid) if target.kind == "live" and target.pid else None
        return facts
    return SESSION.cached("fork-facts", compute)


def process_facts(pid):
    """/proc facts of a live process and its parent (fork-hazards): their
    stat files read by pyhang.procfs (the parent pid, the start times), the
    rest by native process_facts()."""
    own = procfs.stat(pid)
    facts = native.process_facts(pid, own["ppid"] if own else 0)
    parent = procfs.stat(own["ppid"]) if own and own["ppid"] > 1 else None
    facts["start_ticks"] = own["start_ticks"] if own else None
    facts["parent_start_ticks"] = parent["start_ticks"] if parent else None
    if own is None:
        facts["problem"] = "cannot read /proc/%d/stat" % pid
    return facts


def fork_containers():
    """The large builtin containers among module globals (native
    fork_containers()), once per stop: {containers, problems}."""
    return SESSION.cached("fork-containers", lambda: native.fork_containers(interpreter()))


def python_values():
    """Python values as text and frame locals (native PythonValues), once per stop."""
    return SESSION.cached("values", lambda: native.PythonValues(interpreter()))

"""Put together what gdb collected (threads, registers, pcs) with what the
native decoders read from memory (the CPython state) into the report.

No gdb here: the inputs are plain data, so this is tested without a target.
"""
from pyhang import syscalls
from pyhang.report import GilSummary, PythonFrame

# Per-thread GIL states of the JSON contract.
HOLDS, WAITING, RELEASED, NO_PYTHON, UNKNOWN = "holds", "waiting", "released", "no-python", "unknown"


class PythonView:
    """The CPython state of one target, indexed for the report's questions."""

    def __init__(self, state):
        self.state = state or {"status": "unreadable", "threads": [], "gils": [], "warnings": []}
        self.by_tid = {}
        for t in self.state["threads"]:
            if t.get("native_tid"):
                self.by_tid.setdefault(t["native_tid"], t)

    @property
    def ok(self):
        return self.state.get("status") == "ok"

    @property
    def version(self):
        return self.state.get("version")

    def thread(self, tid):
        return self.by_tid.get(tid)

    def gil_of_wait(self, address):
        """The GIL (dict) a futex/cond/mutex address belongs to, or None."""
        if address is None:
            return None
        for g in self.state["gils"]:
            # "ranges": every piece of the GIL (on 3.6 its state is several statics).
            pieces = g.get("ranges") or [(g["address"], g["size"])]
            if any(start and start <= address < start + size for start, size in pieces):
                return g
        return None

    def status_line(self):
        """One plain line when there is no usable Python state, else None."""
        status = self.state.get("status")
        if status == "ok":
            return None
        if status == "not-python":
            return "this process runs no CPython interpreter pyhang can find"
        if status == "starting":
            return "the Python interpreter is still starting: no thread state yet"
        if status == "finalizing":
            return "the Python interpreter is finalizing (shutting down)"
        return "the Python state could not be read (%s)" % status


def gil_state(view, tid, registers):
    """holds / waiting / released / no-python / unknown for one thread."""
    if not view.ok and view.state.get("status") not in ("finalizing",):
        return NO_PYTHON if view.state.get("status") == "not-python" else UNKNOWN
    t = view.thread(tid)
    if t is None:
        return NO_PYTHON
    if t.get("holds_gil"):
        return HOLDS
    if view.gil_of_wait(syscalls.futex_address(registers)) is not None:
        return WAITING
    return RELEASED


def python_frames(view, tid):
    t = view.thread(tid)
    if t is None:
        return []
    # Positional: thousands of frames per report.
    return [PythonFrame(f["function"], f["file"], f["line"]) for f in t["frames"]]


def gil_summary(view, gil_states):
    """The report's `gil` object: the main interpreter's GIL (the only one
    before 3.12), with waiters found from the futex each thread sleeps on."""
    summary = GilSummary()
    gils = view.state.get("gils") or []
    if not gils:
        return summary
    main = min(gils, key=lambda g: g["interp_id"] if g["interp_id"] >= 0 else 0)
    summary.locked = main.get("locked")
    holder = main.get("holder_tstate")
    if holder:
        for t in view.state["threads"]:
            if t["tstate"] == holder:
                summary.holder_tid = t.get("native_tid")
    summary.waiters = sorted(tid for tid, s in gil_states.items() if s == WAITING)
    return summary


def holder_blocked_line(tid, gdb_num, registers, frames):
    """The classic hang: the GIL holder sleeps in a system call.  One line, or None."""
    nr = syscalls.in_syscall(registers)
    if nr is None or nr not in syscalls.BLOCKING:
        return None
    where = next((f for f in frames if f.function), None)
    inside = " in %s" % where.function if where else ""
    lib = next((f.library for f in frames if f.library), None)
    if lib:
        inside += " (%s)" % lib.rsplit("/", 1)[-1]
    return ("Thread %d (LWP %d) holds the GIL while blocked in the %s system call%s: "
            "no other thread can run Python until it returns" % (gdb_num, tid, syscalls.name(nr), inside))

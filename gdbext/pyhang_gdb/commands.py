"""gdb commands.  Each command prints one line on failure, never a traceback
(set PYHANG_DEBUG=1 in the environment to see one)."""
import argparse
import json
import os
import traceback

import gdb

import _pyhang_native as native
from pyhang import compose, deadlocks, locks, render, syscalls
from pyhang.report import NativeFrame, Report, TargetInfo, ThreadReport, to_json
from pyhang_gdb import collect
from pyhang_gdb.session import SESSION, NoTarget

DEFAULT_NATIVE_DEPTH = 8
# Deep enough to see a driver library below a Python callback
# (PyGILState_Ensure, ctypes, libffi, the driver): the driver-lock heuristics
# look this deep at blocked threads when some lock records no owner.
HEURISTIC_NATIVE_DEPTH = 16
LOCK_FRAME_DEPTH = 6  # lock functions sit within the top frames


class ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ArgumentError("%s: %s" % (self.prog, message))


def parser(prog, description):
    return _Parser(prog=prog, description=description, add_help=False)


class PyhangCommand(gdb.Command):
    """Base: runs `run(argv)`, turns every failure into one line."""
    name = None
    command_class = gdb.COMMAND_STATUS
    prefix = False

    def __init__(self):
        super().__init__(self.name, self.command_class, prefix=self.prefix)

    def invoke(self, arg, from_tty):
        try:
            self.run(gdb.string_to_argv(arg))
        except (NoTarget, ArgumentError, native.ReaderError) as exc:
            print("pyhang: %s" % (exc,))
        except gdb.error as exc:
            print("pyhang: %s: gdb: %s" % (self.name, exc))
        except Exception as exc:  # never a traceback at the user's prompt
            print("pyhang: %s failed: %s: %s" % (self.name, type(exc).__name__, exc))
            if os.environ.get("PYHANG_DEBUG"):
                traceback.print_exc()

    def run(self, argv):
        raise NotImplementedError


def native_frames(target, pcs):
    """Symbolize a thread's pcs.  Outer frames' pcs are return addresses:
    look up pc-1 so a call at the end of a function names that function."""
    # A pc in the first page is where an unwinder without symbols lost its way.
    for i, pc in enumerate(pcs):
        if pc < 4096:
            pcs = pcs[:i]
            break
    lookups = [pc if i == 0 else pc - 1 for i, pc in enumerate(pcs)]
    out = []
    for i, (pc, (fn, lib, off)) in enumerate(zip(pcs, target.symbolize(lookups))):
        out.append(NativeFrame(pc=pc, function=fn, library=lib, offset=off + (0 if i == 0 else 1) if fn else 0))
    return out


def target_info(target):
    inferior = gdb.selected_inferior()
    exe = target.executable or gdb.current_progspace().filename
    info = TargetInfo(kind=target.kind, pid=target.pid or inferior.pid or None, executable=exe)
    if target.kind == "core":
        from pyhang_gdb.session import core_path
        info.core = core_path()
    return info


def executable_warnings(target):
    """gdb's idea of the executable against the target's own record."""
    given = gdb.current_progspace().filename
    if given is None:
        return ["gdb was given no executable; pyhang reads symbols from the files the target mapped"]
    if target.executable and os.path.realpath(given) != os.path.realpath(target.executable):
        return ["gdb was given the executable %s, but the target runs %s: gdb's own frames may be wrong; "
                "pyhang reads %s" % (given, target.executable, target.executable)]
    return []


def python_view():
    """The target's CPython state, decoded once per stop."""
    target = SESSION.target()
    return SESSION.cached("python", lambda: compose.PythonView(native.python_state(target)))


def lock_reader():
    """glibc version, lock layouts and pthread_t mapping of the target, found once per stop."""
    target = SESSION.target()
    return SESSION.cached("locks", lambda: native.LockReader(target, None))


def python_locks():
    """threading Lock/RLock/Condition lookup, the interpreter decoded once per stop."""
    target = SESSION.target()
    return SESSION.cached("pylocks", lambda: native.PythonLocks(target))


def native_stacks():
    """(Target, Unwinder) with which collect reads registers and unwinds
    without gdb, or None to have gdb unwind every thread (PYHANG_UNWIND=gdb,
    to compare the two)."""
    if os.environ.get("PYHANG_UNWIND") == "gdb":
        return None
    target = SESSION.target()
    return target, SESSION.cached("unwinder", lambda: native.Unwinder(target))


def library_of(target, address):
    return target.symbolize([address])[0][1]


def blocked_on(target, view, snap, frames, gil):
    """What the thread of `snap` waits on (BlockedOn), or None."""
    if gil == compose.WAITING:
        return locks.gil_wait(compose.gil_summary(view, {}).holder_tid)
    if syscalls.in_syscall(snap.registers) is None and not frames:
        return None
    frame_dicts = [{"pc": f.pc, "function": f.function, "library": f.library} for f in frames]
    identified = lock_reader().identify(snap.tid, snap.registers, frame_dicts)
    b = locks.from_native(identified, lambda a: library_of(target, a))
    if view.thread(snap.tid) is not None and (b is None or b.kind in ("semaphore", "futex")):
        # A threading Lock/RLock/Condition sleeps on a sem_t the lock object points to.
        futex = syscalls.futex_address(snap.registers)
        if futex is not None:
            py = locks.from_python(python_locks().wait(snap.tid, futex))
            if py is not None:
                return py
    if b is not None and b.kind == "futex" and not b.owners:
        joined = joined_thread(target, b.address)
        if joined is not None:
            b = locks.thread_join(b.address, joined)
    return b


def thread_bases():
    """fs_base (its struct pthread) → TID of every thread, once per stop."""
    def compute():
        native = native_stacks()
        with collect.SelectionKept():
            snaps = [collect.snapshot_thread(t, 0, native) for t in SESSION.threads() if t.is_valid()]
        return {s.registers["fs_base"]: s.tid for s in snaps if "fs_base" in s.registers}
    return SESSION.cached("thread-bases", compute)


# struct pthread is a few KiB; its tid field is near the start.
_PTHREAD_SPAN = 4096


def joined_thread(target, futex):
    """pthread_join sleeps on the joined thread's tid word inside its struct
    pthread, whose value is that thread's TID: the TID when `futex` is such a
    word, else None."""
    if futex is None:
        return None
    word = target.read(futex, 4)
    if word is None:
        return None
    value = int.from_bytes(word, "little")
    for base, tid in thread_bases().items():
        if base <= futex < base + _PTHREAD_SPAN and value == tid:
            return tid
    return None


def build_report(native_depth=None):
    explicit_depth = native_depth is not None
    native_depth = native_depth or DEFAULT_NATIVE_DEPTH
    target = SESSION.target()
    report = Report(target=target_info(target))
    report.warnings.extend(target.warnings)
    report.warnings.extend(executable_warnings(target))
    view = python_view()
    report.target.python_version = view.version
    report.warnings.extend(view.state.get("warnings", []))
    if view.status_line() and view.state.get("status") != "not-python":
        report.warnings.append(view.status_line())
    reader = lock_reader()
    if reader.problem:
        report.warnings.append("locks: " + reader.problem)
    gil_states = {}
    snaps = collect.snapshot_threads(native_depth, native=native_stacks())
    # Each thread's struct pthread (fs_base) is known now: joins and fork
    # analysis need not switch to every thread again.
    SESSION.cached("thread-bases", lambda: {s.registers["fs_base"]: s.tid for s in snaps if "fs_base" in s.registers})
    names = locks.ThreadNames(snaps)
    for snap in snaps:
        th = ThreadReport(tid=snap.tid, gdb_num=snap.num, name=snap.name, problem=snap.problem)
        th.native_frames = native_frames(target, snap.pcs)
        th.python_frames = compose.python_frames(view, snap.tid)
        th.gil = gil_states[snap.tid] = compose.gil_state(view, snap.tid, snap.registers)
        b = blocked_on(target, view, snap, th.native_frames, th.gil)
        th.blocked_on = locks.finish(b, names) if b else None
        pt = view.thread(snap.tid)
        if pt and pt.get("problem"):
            th.problem = "; ".join(p for p in (th.problem, pt["problem"]) if p)
        report.threads.append(th)
    report.gil = compose.gil_summary(view, gil_states)
    if not explicit_depth and native_depth < HEURISTIC_NATIVE_DEPTH and deadlocks.needs_deeper_frames(report.threads):
        deepen(target, report.threads, snaps)
    find_deadlocks(report, {s.tid: s for s in snaps})
    from pyhang_gdb import fork_commands
    report.fork_hazards = fork_commands.hazards(target, view, report)
    return report


def deepen(target, threads, snaps):
    """Unwind blocked threads further, for the driver-lock heuristics."""
    blocked = {t.tid for t in threads if t.blocked_on is not None}
    wanted = [t for t in gdb.selected_inferior().threads() if t.ptid[1] in blocked]
    deeper = {s.tid: s for s in collect.snapshot_threads(HEURISTIC_NATIVE_DEPTH, threads=wanted,
                                                         native=native_stacks())}
    for th in threads:
        if th.tid in deeper and not deeper[th.tid].problem:
            th.native_frames = native_frames(target, deeper[th.tid].pcs)


def find_deadlocks(report, snaps):
    """Edges from every decoded owner, likely holders where a lock records
    none, every cycle, and verdicts for blocked processes without one."""
    edges = deadlocks.certain_edges(report.threads)
    edges += native.likely_holders(deadlocks.thread_facts(report.threads))
    cycles, truncated = native.find_cycles(edges)
    report.edges = edges
    report.deadlocks = [deadlocks.deadlock_json(c) for c in cycles]
    if truncated:
        report.warnings.append("more deadlock cycles than pyhang lists; the first %d are shown" % len(cycles))
    blocked_line = None
    holder = report.gil.holder_tid
    if holder in snaps:
        th = next(t for t in report.threads if t.tid == holder)
        blocked_line = compose.holder_blocked_line(holder, th.gdb_num, snaps[holder].registers, th.native_frames)
    report.verdicts = deadlocks.verdicts(report, blocked_line)


class PyhangPrefix(PyhangCommand):
    """pyhang: why is this Python program stuck?

Subcommands:
  pyhang report [--json] [--native-depth N]   every thread: native frames (and, as decoded, Python frames, GIL, locks)
  pyhang version                              pyhang and the Python gdb embeds
Commands: py-bt / pyhang-py-bt (Python backtrace of the selected thread), gil-holder,
lock-owner (what the selected thread waits on; `thread apply all lock-owner`),
fork-hazards (what a fork child inherited that can never be released)."""
    name = "pyhang"
    prefix = True

    def run(self, argv):
        print(self.__doc__)


class PyhangReport(PyhangCommand):
    """pyhang report [--json [--pretty]] [--native-depth N]: every thread of the target, what it runs and what it waits for.

--json prints the "pyhang-report/1" document that scripts rely on."""
    name = "pyhang report"

    def run(self, argv):
        p = parser("pyhang report", "every thread of the target")
        p.add_argument("--json", action="store_true")
        p.add_argument("--pretty", action="store_true", help="with --json: indented")
        p.add_argument("--native-depth", type=int, default=None,
                       help="native frames per thread (default %d, more for blocked threads when "
                            "a lock's owner must be guessed)" % DEFAULT_NATIVE_DEPTH)
        args = p.parse_args(argv)
        report = build_report(native_depth=max(1, args.native_depth) if args.native_depth else None)
        if args.json:
            # Compact: the C encoder; --pretty for people (slower on thousands of frames).
            # to_json builds a tree of fresh dicts and lists: no cycle to check for.
            print(json.dumps(to_json(report), indent=1 if args.pretty else None,
                             separators=None if args.pretty else (",", ":"), check_circular=False))
        else:
            print(render.render_text(report))


class PyhangVersion(PyhangCommand):
    """pyhang version: versions of pyhang, its native module and gdb's Python."""
    name = "pyhang version"

    def run(self, argv):
        import sys
        print("pyhang (schema %s), native module %s, gdb %s with Python %d.%d.%d" % (
            __import__("pyhang").SCHEMA, native.__file__, gdb.VERSION, *sys.version_info[:3]))


class PythonBacktrace(PyhangCommand):
    """pyhang-py-bt: the Python stack of the selected thread, innermost first,
decoded from target memory (no debug symbols needed), and its GIL state.
Works under `thread apply all`.  Also registered as `py-bt` unless
libpython.py already defined it."""
    name = "pyhang-py-bt"

    def run(self, argv):
        no_arguments(self.name, "Python backtrace of the selected thread", argv)
        thread = gdb.selected_thread()
        if thread is None:
            raise NoTarget("no thread is selected")
        view = python_view()
        snap = collect.snapshot_selected(thread, 0, native_stacks())
        if not view.ok and view.state.get("status") != "finalizing":
            print(view.status_line())
            return
        pt = view.thread(snap.tid)
        if pt is None:
            print("Thread %d (LWP %d) has no Python thread state: it runs no Python code" % (snap.num, snap.tid))
            return
        gil = compose.gil_state(view, snap.tid, snap.registers)
        print("Thread %d (LWP %d), Python %s, GIL: %s" % (snap.num, snap.tid, view.version, gil))
        if not pt["frames"]:
            print("  (no Python frame: the thread is between Python calls or has not started)")
        else:
            print("Traceback (most recent call first):")
            for f in compose.python_frames(view, snap.tid):
                print("  " + render.python_frame_line(f))
        if pt.get("problem"):
            print("  (incomplete: %s)" % pt["problem"])


_NO_ARGS = {}


def no_arguments(name, description, argv):
    """Commands that take no argument still refuse unknown ones, with one line."""
    if argv:
        if name not in _NO_ARGS:
            _NO_ARGS[name] = parser(name, description)
        _NO_ARGS[name].parse_args(argv)


class LockOwner(PyhangCommand):
    """lock-owner: what the selected thread waits on (pthread mutex, rwlock,
semaphore, condition variable, futex, the GIL), at which address, in which
library, and which thread owns it.  Use `thread apply all lock-owner` for
every thread."""
    name = "lock-owner"

    def run(self, argv):
        no_arguments(self.name, "what the selected thread waits on", argv)
        thread = gdb.selected_thread()
        if thread is None:
            raise NoTarget("no thread is selected")
        target = SESSION.target()
        view = python_view()
        reader = lock_reader()
        # Thread numbers of every thread, for owners; computed once per stop.
        names = SESSION.cached("thread-names", lambda: locks.ThreadNames(
            [collect.ThreadSnapshot(num=t.num, tid=t.ptid[1], name=None) for t in SESSION.threads()]))
        snap = collect.snapshot_selected(thread, LOCK_FRAME_DEPTH, native_stacks())
        frames = native_frames(target, snap.pcs)
        gil = compose.gil_state(view, snap.tid, snap.registers)
        b = blocked_on(target, view, snap, frames, gil)
        if b is None:
            nr = syscalls.in_syscall(snap.registers)
            doing = "in the %s system call" % syscalls.name(nr) if nr is not None else "running"
            print("%s is not blocked on a lock (%s)" % (names(snap.tid), doing))
            if reader.problem:
                print("  (%s)" % reader.problem)
            return
        print(locks.describe(locks.finish(b, names), snap.tid, names))


class PyBt(PythonBacktrace):
    __doc__ = PythonBacktrace.__doc__
    name = "py-bt"


class GilHolder(PyhangCommand):
    """gil-holder: which thread holds the GIL, which wait for it, and which run
with it released (per interpreter on 3.12+)."""
    name = "gil-holder"

    def run(self, argv):
        no_arguments(self.name, "who holds the GIL", argv)
        target = SESSION.target()
        view = python_view()
        if not view.ok:
            print(view.status_line())
            return
        snaps = {s.tid: s for s in collect.snapshot_threads(DEFAULT_NATIVE_DEPTH, native=native_stacks())}
        states = {tid: compose.gil_state(view, tid, s.registers) for tid, s in snaps.items()}
        for w in view.state.get("warnings", []):
            print("warning: " + w)

        def who(tid):
            s = snaps.get(tid)
            return "Thread %d (LWP %d)" % (s.num, tid) if s else "LWP %s (not a thread gdb knows)" % tid

        gils = view.state["gils"] or [{"interp_id": -1, "locked": None, "holder_tstate": 0, "source": ""}]
        for g in sorted(gils, key=lambda g: g["interp_id"]):
            label = "GIL" if g["interp_id"] < 0 else "GIL of interpreter %d" % g["interp_id"]
            members = [t for t in view.state["threads"] if g["interp_id"] < 0 or t["interp_id"] == g["interp_id"]]
            holder = next((t for t in members if t["holds_gil"]), None)
            if holder and holder.get("native_tid"):
                print("%s: held by %s" % (label, who(holder["native_tid"])))
                s = snaps.get(holder["native_tid"])
                if s:
                    line = compose.holder_blocked_line(s.tid, s.num, s.registers, native_frames(target, s.pcs))
                    if line:
                        print("  " + line)
            elif g.get("locked") is False:
                print("%s: not held" % label)
            elif g.get("locked") is None:
                print("%s: state unknown" % label)
            else:
                print("%s: locked, holder not found among the thread states" % label)
            tids = [t.get("native_tid") for t in members if t.get("native_tid")]
            waiting = [t for t in tids if states.get(t) == compose.WAITING]
            released = [t for t in tids if states.get(t) == compose.RELEASED]
            print("  waiting for it: %s" % (", ".join(who(t) for t in waiting) or "none"))
            print("  running with it released (native code, sleeping or blocked): %s" % (
                ", ".join(who(t) for t in released) or "none"))
        others = [tid for tid, st in states.items() if st == compose.NO_PYTHON]
        if others:
            print("no Python thread state: %s" % ", ".join(who(t) for t in sorted(others)))


def register():
    for cls in (PyhangPrefix, PyhangReport, PyhangVersion, PythonBacktrace, GilHolder, LockOwner):
        cls()
    from pyhang_gdb import fork_commands
    fork_commands.register()
    try:
        gdb.execute("help py-bt", to_string=True)
    except gdb.error:
        PyBt()  # libpython.py did not define it

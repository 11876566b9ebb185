"""Which target pyhang reads, and how: one native Target per inferior,
dropped when the inferior runs again or changes.

live process (gdb's native target)  -> Target.live(pid): process_vm_readv
core file                           -> Target.core(path): the core's bytes
anything else (remote, ...)         -> Target.from_callback(gdb's read_memory)
"""
import os
import re

import gdb
import _pyhang_native as native

from pyhang import procfs
from pyhang.core_notes import core_in_gdb_arguments, core_problem
from pyhang.model.kinds import CommandFailure
from pyhang_gdb import settings


class NoTarget(Exception):
    """There is nothing to inspect (no process, no core; `kind`: which, a model.kinds.CommandFailure)."""

    def __init__(self, message, kind=CommandFailure.NO_TARGET):
        super().__init__(message)
        self.kind = kind


_CORE_RE = re.compile(r"Local core dump file:\s*\n\s*`(.+?)', file type")


def _connection_type(inferior):
    conn = getattr(inferior, "connection", None)
    return getattr(conn, "type", None) if conn is not None else None


def core_path():
    """The core file gdb has loaded; gdb 13's Python API does not expose it."""
    m = _CORE_RE.search(gdb.execute("info target", to_string=True))
    return m.group(1) if m else None


def _refused_core():
    """Why the core gdb was started with is not loaded (gdb refused it: cut short, no core at all), or None."""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return None
    path = core_in_gdb_arguments(argv)
    return core_problem(path) if path else None


def _no_target():
    refused = _refused_core()
    return NoTarget("no core file is loaded: " + refused if refused else
                    "no process or core file is loaded (use `gdb -p PID` or `gdb EXE CORE`)")


def _callback_mappings():
    maps = []
    try:
        text = gdb.execute("info proc mappings", to_string=True)
    except gdb.error:
        return maps
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0].startswith("0x") and parts[-1].startswith("/"):
            try:
                start, end, offset = int(parts[0], 16), int(parts[1], 16), int(parts[3], 16)
            except ValueError:
                continue
            maps.append((start, end, offset, parts[-1]))
    return maps


def _core_file_search():
    """Where pyhang looks for the files a core names: the executable gdb was
    given, `set sysroot` and `set solib-search-path`, as gdb does."""
    sysroot = gdb.parameter("sysroot") or ""
    if sysroot.startswith("target:"):  # the target's own files: for a core, this machine's
        sysroot = sysroot[len("target:"):]
    search = gdb.parameter("solib-search-path") or ""
    return {"executable": gdb.current_progspace().filename or "", "sysroot": sysroot,
            "search_path": [d for d in search.split(":") if d]}


def _debug_directories():
    """Where gdb looks for separate debug files (`set debug-file-directory`),
    each also under the sysroot, as gdb does; PYHANG_DEBUG_FILE_DIRECTORY
    instead when set (the command line tells gdb to load none, and pyhang
    where they are)."""
    where = os.environ.get("PYHANG_DEBUG_FILE_DIRECTORY")
    if where is None:
        where = gdb.parameter("debug-file-directory") or ""
    dirs = [d for d in where.split(":") if d]
    sysroot = _core_file_search()["sysroot"]
    if sysroot and sysroot != "/":
        dirs += [os.path.join(sysroot, d.lstrip("/")) for d in dirs]
    return dirs


class Session:
    """The native target of the selected inferior, kept while it stays stopped."""

    def __init__(self):
        self._key = None
        self._target = None
        self._cache = {}
        self.generation = 0  # bumped whenever the inferior runs

    def ran(self, *_):
        self.generation += 1
        self._key = None
        self._target = None
        self._cache = {}

    def cached(self, name, compute):
        """What `compute()` says of the current target, computed once per
        stop: `thread apply all py-bt` decodes the interpreter once."""
        self.target()  # drops the cache when the target changed
        if name not in self._cache:
            self._cache[name] = compute()
        return self._cache[name]

    def target(self):
        inferior = gdb.selected_inferior()
        # (inferior.threads() is asked only when the target changed: on a core it costs
        # milliseconds a call, and `thread apply all` calls this once per thread.)
        if inferior is None or inferior.pid == 0:
            raise _no_target()
        kind = _connection_type(inferior)
        key = (inferior.num, inferior.pid, kind, self.generation, settings.value("reader"))
        if key != self._key:
            # Listed once per stop and kept for threads(): on a core, gdb's list
            # takes time that grows faster than the number of threads.
            threads = list(inferior.threads())
            if not threads:
                raise _no_target()
            if kind == "native" and not procfs.alive(inferior.pid):
                raise NoTarget("process %d has exited: there is nothing left to read (gdb still shows its "
                               "last state)" % inferior.pid, CommandFailure.EXITED)
            self._target = self._open(inferior, kind)
            self._target.set_debug_directories(_debug_directories())
            self._key = key
            self._cache = {"threads": threads}
        return self._target

    def threads(self):
        """The inferior's threads, listed once per stop."""
        return self.cached("threads", lambda: list(gdb.selected_inferior().threads()))

    @staticmethod
    def _open(inferior, kind):
        # `set pyhang reader gdb` reads through gdb even where pyhang could read
        # itself: for targets gdb reaches in ways pyhang does not know, and to
        # compare the two.
        if settings.value("reader") == "gdb":
            kind = "forced-gdb"
        if kind == "native":
            return native.Target.live(inferior.pid)
        if kind == "core":
            path = core_path()
            if path:
                return native.Target.core(path, **_core_file_search())

        def read(addr, size):
            try:
                return inferior.read_memory(addr, size).tobytes()
            except gdb.MemoryError:
                return None
        return native.Target.from_callback(read, _callback_mappings(), "%s target through gdb" % (kind or "unknown"))


SESSION = Session()
gdb.events.cont.connect(SESSION.ran)
gdb.events.exited.connect(SESSION.ran)
gdb.events.new_objfile.connect(SESSION.ran)


def selected_gdb_thread():
    """gdb's selected thread; NoTarget when there is none, where no process or core at all (and why a core
    given was not loaded) is said first."""
    thread = gdb.selected_thread()
    if thread is None:
        SESSION.target()
        raise NoTarget("no thread is selected", CommandFailure.NO_THREAD)
    return thread

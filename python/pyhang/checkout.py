"""Where pyhang runs from: the directory holding gdbext/ and python/ (a
checkout, or an installation's share/pyhang), and the native module's place
on the import path; where this machine keeps separate debug files.  Light on purpose: the command line imports it on
every path, with no gdb to run (--no-stop)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GDBEXT = os.path.join(ROOT, "gdbext", "pyhang.gdb")


def native_path():
    """The native module importable here, from the build (or beside an
    installed pyhang, which is on the path already)."""
    build = os.path.join(os.environ.get("PYHANG_BUILD_DIR") or os.path.join(ROOT, "build"), "python")
    if build not in sys.path:
        sys.path.insert(0, build)


# Where separate debug files are (gdb's default); pyhang reads their symbol tables itself
# (PYHANG_DEBUG_FILE_DIRECTORY: a gdb the command line runs is told to load no DWARF of theirs, which
# with libc6-dbg installed took 0.2 s of every run).
DEBUG_FILE_DIRECTORY = "/usr/lib/debug"


def debug_directories():
    """The directories of separate debug files pyhang names frames from here: PYHANG_DEBUG_FILE_DIRECTORY
    (colon-separated) when set, else DEBUG_FILE_DIRECTORY."""
    return [d for d in os.environ.get("PYHANG_DEBUG_FILE_DIRECTORY", DEBUG_FILE_DIRECTORY).split(":") if d]

"""Where pyhang runs from: the directory holding gdbext/ and python/ (a
checkout, or an installation's share/pyhang), and the native module's place
on the import path.  Light on purpose: the command line imports it on
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

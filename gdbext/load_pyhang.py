"""Entry point inside gdb: `source .../gdbext/load_pyhang.py` (pyhang.gdb does this).

Puts the pyhang package and the native module on gdb's Python path and
registers the commands.  Every failure to load is one line telling what to do.
"""
import os
import sys

import gdb


def _here():
    """This file's directory.  gdb sets __file__ only for the outermost script
    it sources: when pyhang.gdb is itself sourced from a Python script,
    __file__ names that script.  gdb keeps the file it sources open, so its
    path is among our fds."""
    mine = globals().get("__file__") or ""
    if os.path.basename(mine) == "load_pyhang.py":
        return os.path.dirname(os.path.abspath(mine))
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if target.endswith("/load_pyhang.py"):
            return os.path.dirname(target)
    return os.environ.get("PYHANG_GDBEXT") or os.path.dirname(os.path.abspath(mine))


def _load():
    here = _here()
    root = os.path.dirname(here)
    # Checkout: <build>/python holds the module and the build's byte-compiled
    # copy of pyhang and pyhang_gdb, searched first; <root>/python and gdbext
    # hold the sources, searched after it (a build that staged no copy).
    # Installed: <prefix>/share/pyhang/{gdbext,python} with the module beside the package.
    build = os.environ.get("PYHANG_BUILD_DIR") or os.path.join(root, "build")
    paths = [p for p in (os.path.join(build, "python"), os.path.join(root, "python"), here)
             if os.path.isdir(p) and p not in sys.path]
    sys.path[0:0] = paths
    from pyhang_gdb import loader
    if loader.load(root=root, build=build):
        from pyhang_gdb import commands  # (they import the native module: only once it can be)
        commands.register()


try:
    _load()
except Exception as exc:  # one line, never a traceback, whatever went wrong
    print("pyhang: could not load: %s" % (exc,))

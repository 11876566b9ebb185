# pyhang: why is this Python program stuck?
#   (gdb) source /path/to/pyhang/gdbext/pyhang.gdb
#   (gdb) pyhang report            (gdb) pyhang report --json
# The script finds its own directory, then loads gdbext/load_pyhang.py, which puts
# the pyhang package and the native module on gdb's Python path.
python
import os as _pyhang_os
def _pyhang_script_dir():
    # gdb keeps the script it is sourcing open: its path is among our fds.
    for fd in _pyhang_os.listdir("/proc/self/fd"):
        try:
            target = _pyhang_os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if target.endswith("/pyhang.gdb"):
            return _pyhang_os.path.dirname(target)
    return _pyhang_os.environ.get("PYHANG_GDBEXT")
_pyhang_dir = _pyhang_script_dir()
if _pyhang_dir is None:
    print("pyhang: cannot tell where pyhang.gdb lives; set PYHANG_GDBEXT=/path/to/pyhang/gdbext and source it again")
else:
    try:
        gdb.execute("source " + _pyhang_os.path.join(_pyhang_dir, "load_pyhang.py"))
    except gdb.error as _pyhang_error:  # e.g. the target died while gdb attached: one line, never a traceback
        print("pyhang: loading stopped: gdb: %s" % (_pyhang_error,))
        del _pyhang_error
del _pyhang_script_dir, _pyhang_dir, _pyhang_os
end

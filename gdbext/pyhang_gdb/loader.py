"""Where pyhang was loaded from, and whether its native module can be
imported (or, in one line, why not)."""
import glob
import os
import sys
import sysconfig

BUILD_HINT = "build it with: examples/demo.sh (or testdata/run-tests.sh), which configures for gdb's Python"


def native_problem(build):
    """Why `_pyhang_native` cannot be imported, as one line; None when it can."""
    try:
        import _pyhang_native  # noqa: F401
        return None
    except ImportError as exc:
        wanted = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        found = sorted(glob.glob(os.path.join(build, "python", "_pyhang_native*.so")))
        here = "gdb embeds Python %d.%d" % sys.version_info[:2]
        if not found:
            return "the native module is not built (looked in %s/python); %s" % (build, BUILD_HINT)
        if not any(f.endswith(wanted) for f in found):
            return "the native module %s was built for another Python, but %s (needs *%s); %s" % (
                os.path.basename(found[0]), here, wanted, BUILD_HINT)
        return "the native module cannot be loaded (%s); %s" % (exc, BUILD_HINT)


# The checkout or installation pyhang was loaded from (its gdbext/ and python/).
ROOT = None


def load(root, build):
    """Record where pyhang was loaded from; whether the native module can be
    imported (when not, one line says why).  The commands are registered by
    the entry point (load_pyhang.py), not here: they need this module
    (`ROOT`), and this module needs none of them."""
    global ROOT
    ROOT = root
    problem = native_problem(build)
    if problem:
        print("pyhang: " + problem)
        return False
    return True

"""Whether pyhang's native module can be imported here, and, in one line,
why not and what to do in the tree pyhang runs from: a checkout (its
build directory, where cmake builds the module) or an installation
(DIR/share/pyhang, the module beside the package).  gdb's loader and the
command line both say it so (words: render.install)."""
import glob
import os
import sys
import sysconfig


def installed(root):
    """Whether `root` (the directory holding gdbext/ and python/) is an installation: no native sources beside it."""
    return not os.path.isdir(os.path.join(root, "native"))


def module_dir(root, build):
    """Where the native module is looked for: an installation's python/, a checkout's build's."""
    return os.path.join(root, "python") if installed(root) else os.path.join(build, "python")


def problem(root, build, exc=None):
    """Why `_pyhang_native` cannot be imported (`exc`: the ImportError, if one was caught), as one line; None
    when it can."""
    if exc is None:
        try:
            import _pyhang_native  # noqa: F401
            return None
        except ImportError as caught:
            exc = caught
    from pyhang.render import install as words
    is_installed = installed(root)
    where = module_dir(root, build)
    fix = words.fix(is_installed, root, build, os.path.dirname(os.path.dirname(root)))
    wanted = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    found = sorted(glob.glob(os.path.join(where, "_pyhang_native*.so")))
    if not found:
        return (words.not_installed if is_installed else words.not_built)(where, fix)
    if not any(f.endswith(wanted) for f in found):
        return words.other_python(os.path.join(where, os.path.basename(found[0])), sys.version_info[:2],
                                  "gdb" in sys.modules, wanted, fix)
    return words.unloadable(exc, fix)

"""Where pyhang was loaded from, and whether its native module can be
imported (or, in one line, why not: pyhang.native_module)."""
from pyhang import native_module

# The checkout or installation pyhang was loaded from (its gdbext/ and python/).
ROOT = None


def load(root, build):
    """Record where pyhang was loaded from; whether the native module can be
    imported (when not, one line says why and what to do in this tree).  The
    commands are registered by the entry point (load_pyhang.py), not here:
    they need this module (`ROOT`), and this module needs none of them."""
    global ROOT
    ROOT = root
    problem = native_module.problem(root, build)
    if problem:
        print("pyhang: " + problem)
        return False
    return True

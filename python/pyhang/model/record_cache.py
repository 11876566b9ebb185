"""Compiles the __init__ of every record class pyhang defines and keeps them
in the package's bytecode cache (record.CACHE), as byte-compiling does for
its modules: a record class then takes its __init__ from there instead of
compiling it when its first instance is made.  The build runs it on the
staged package, with the Python that will load it:

    python3 -m pyhang.model.record_cache

Every module of pyhang but the command line's entry point that imports
without gdb and without the compiled module is imported (the others define
no record)."""
import importlib
import marshal
import os
import pkgutil
import sys

import pyhang
from pyhang.model import record


def main():
    for info in pkgutil.walk_packages(pyhang.__path__, "pyhang."):
        if info.name.endswith(".__main__"):   # the command line: running it is all it does
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:   # needs gdb or the compiled module
            continue
    compiled = {source: marshal.dumps(compile(source, "<record>", "exec")) for source in record.MADE}
    os.makedirs(os.path.dirname(record.CACHE), exist_ok=True)
    partial = record.CACHE + ".tmp"
    with open(partial, "wb") as f:
        marshal.dump(compiled, f)
    os.replace(partial, record.CACHE)
    return 0


if __name__ == "__main__":
    sys.exit(main())

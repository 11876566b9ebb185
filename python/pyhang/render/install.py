"""The words of a native module that cannot be loaded: where it was looked
for, and what makes one for gdb's Python in the tree pyhang runs from (a
checkout has a build directory and its scripts; an installation has
neither, and is installed again from a build)."""

CHECKOUT_FIX = ("build it for gdb's Python: cmake -S %(root)s -B %(build)s && cmake --build %(build)s (the configure "
                "asks gdb which Python it embeds), or examples/demo.sh")
INSTALLED_FIX = ("this installation was built for another Python than gdb's: build pyhang again from its source "
                 "(cmake -S SRC -B build, which asks gdb which Python it embeds; cmake --build build; cmake --install "
                 "build --prefix %(prefix)s), or install the package made for this machine's gdb")


def fix(installed, root, build, prefix):
    """What to do about it, in the tree pyhang runs from."""
    return (INSTALLED_FIX if installed else CHECKOUT_FIX) % {"root": root, "build": build, "prefix": prefix}


def not_built(where, fix_text):
    return "the native module is not built (looked in %s); %s" % (where, fix_text)


def not_installed(where, fix_text):
    return "the native module is missing from this installation (looked in %s); %s" % (where, fix_text)


def other_python(found, running, in_gdb, wanted, fix_text):
    """`running`: the (major, minor) of the Python that tried to load it: gdb's (`in_gdb`), or the command line's."""
    return "the native module %s was built for another Python, but %s Python %d.%d (it needs *%s); %s" % (
        found, "gdb embeds" if in_gdb else "the command line runs", running[0], running[1], wanted, fix_text)


def unloadable(exc, fix_text):
    return "the native module cannot be loaded (%s); %s" % (exc, fix_text)

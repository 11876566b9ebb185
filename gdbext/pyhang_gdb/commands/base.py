"""What every pyhang command shares: one line on failure, never a
traceback (set PYHANG_DEBUG=1 in the environment to see one), and argument
errors as one line."""
import argparse
import os
import traceback

import gdb

import _pyhang_native as native
from pyhang_gdb import status
from pyhang_gdb.session import NoTarget


class ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ArgumentError("%s: %s" % (self.prog, message))


def parser(prog, description):
    return _Parser(prog=prog, description=description, add_help=False)


_NO_ARGS = {}


def no_arguments(name, description, argv):
    """Commands that take no argument still refuse unknown ones, with one line."""
    if argv:
        if name not in _NO_ARGS:
            _NO_ARGS[name] = parser(name, description)
        _NO_ARGS[name].parse_args(argv)


def failure(name, exc):
    """The one line that says why command `name` failed with `exc`."""
    if isinstance(exc, (NoTarget, ArgumentError, native.ReaderError)):
        return str(exc)
    if isinstance(exc, gdb.error):
        return "%s: gdb: %s" % (name, exc)
    if os.environ.get("PYHANG_DEBUG"):
        traceback.print_exc()
    return "%s failed: %s: %s" % (name, type(exc).__name__, exc)


class PyhangCommand(gdb.Command):
    """Base: runs `run(argv)`, turns every failure into one line."""
    name = None
    command_class = gdb.COMMAND_STATUS
    prefix = False

    def __init__(self):
        super().__init__(self.name, self.command_class, prefix=self.prefix)

    def invoke(self, arg, from_tty):
        status.started()
        try:
            self.run(gdb.string_to_argv(arg))
            return
        except Exception as exc:  # never a traceback at the user's prompt
            message = failure(self.name, exc)
        print("pyhang: " + message)
        status.failed(message)

    def run(self, argv):
        raise NotImplementedError

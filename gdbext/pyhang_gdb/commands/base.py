"""What every pyhang command shares: one line on failure, never a
traceback (set PYHANG_DEBUG=1 in the environment to see one), and argument
errors as one line."""
import argparse
import os
import sys

import gdb

import _pyhang_native as native
from pyhang.failure import FAILURE_KINDS_ENV, FAILURE_PREFIX
from pyhang.model.kinds import CommandFailure
from pyhang.render.target import reader_error_text
from pyhang_gdb import thread_apply
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


def complete_options(flags, text, word):
    """gdb's completions of the option being typed (the last word of `text`)
    among `flags`.  gdb replaces only `word`, what follows the last of its
    word-break characters ('-' among them): each completion is cut to match.
    (None in gdb's first call, which asks only where words break.)"""
    if word is None:
        return None
    typed = text.rsplit(" ", 1)[-1]
    if typed and not typed.startswith("-"):
        return []
    cut = len(typed) - len(word)
    return [f[cut:] for f in flags if f.startswith(typed)]


def failure(name, exc):
    """The one line that says why command `name` failed with `exc`."""
    if isinstance(exc, native.ReaderError):
        return reader_error_text(exc)
    if isinstance(exc, (NoTarget, ArgumentError)):
        return str(exc)
    if isinstance(exc, gdb.error):
        return "%s: gdb: %s" % (name, exc)
    if os.environ.get("PYHANG_DEBUG"):
        import traceback   # here: 9 ms of every gdb's start for a line only PYHANG_DEBUG asks for
        traceback.print_exc()
    return "%s failed: %s: %s" % (name, type(exc).__name__, exc)


def failure_kind(exc):
    """What kind of failure `exc` is (model.kinds.CommandFailure): what the command line decides on."""
    if isinstance(exc, native.ReaderError):
        return CommandFailure.READER
    if isinstance(exc, NoTarget):
        return exc.kind
    if isinstance(exc, ArgumentError):
        return CommandFailure.ARGUMENTS
    if isinstance(exc, gdb.error):
        return CommandFailure.GDB
    return CommandFailure.OTHER


class Runs:
    """Runs `run(argv)`, turns every failure into one line: a gdb error
    (gdb -batch then exits non-zero), or, under `thread apply`, which an
    error would end before the other threads, a line of output."""
    name = None

    def invoke(self, arg, from_tty):
        try:
            self.run(gdb.string_to_argv(arg))
            return
        except Exception as exc:  # never a traceback at the user's prompt
            message, kind = failure(self.name, exc), failure_kind(exc)
        if thread_apply.active():
            print("pyhang: " + message)
            return
        if os.environ.get(FAILURE_KINDS_ENV):
            sys.stderr.write(FAILURE_PREFIX + kind + "\n")
            sys.stderr.flush()
        raise gdb.GdbError("pyhang: " + message)

    def run(self, argv):
        raise NotImplementedError


class PyhangCommand(Runs, gdb.Command):
    """A gdb command of pyhang's."""
    command_class = gdb.COMMAND_STATUS
    prefix = False

    def __init__(self):
        gdb.Command.__init__(self, self.name, self.command_class, prefix=self.prefix)


class InternalCommand(Runs):
    """A `pyhang` subcommand for pyhang's own use (what the command line and
    --tree ask of a gdb), not one for users: no gdb command of its own, so
    `help pyhang` does not list it; the `pyhang` prefix runs it (gdb hands
    a prefix the subcommands it does not know)."""

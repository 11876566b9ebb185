"""gdb commands.  Each command prints one line on failure, never a traceback
(set PYHANG_DEBUG=1 in the environment to see one)."""
import argparse
import json
import os
import traceback

import gdb

import _pyhang_native as native
from pyhang import render
from pyhang.report import NativeFrame, Report, TargetInfo, ThreadReport, to_json
from pyhang_gdb import collect
from pyhang_gdb.session import SESSION, NoTarget

DEFAULT_NATIVE_DEPTH = 12


class ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ArgumentError("%s: %s" % (self.prog, message))


def parser(prog, description):
    return _Parser(prog=prog, description=description, add_help=False)


class PyhangCommand(gdb.Command):
    """Base: runs `run(argv)`, turns every failure into one line."""
    name = None
    command_class = gdb.COMMAND_STATUS
    prefix = False

    def __init__(self):
        super().__init__(self.name, self.command_class, prefix=self.prefix)

    def invoke(self, arg, from_tty):
        try:
            self.run(gdb.string_to_argv(arg))
        except (NoTarget, ArgumentError, native.ReaderError) as exc:
            print("pyhang: %s" % (exc,))
        except gdb.error as exc:
            print("pyhang: %s: gdb: %s" % (self.name, exc))
        except Exception as exc:  # never a traceback at the user's prompt
            print("pyhang: %s failed: %s: %s" % (self.name, type(exc).__name__, exc))
            if os.environ.get("PYHANG_DEBUG"):
                traceback.print_exc()

    def run(self, argv):
        raise NotImplementedError


def native_frames(target, pcs):
    """Symbolize a thread's pcs.  Outer frames' pcs are return addresses:
    look up pc-1 so a call at the end of a function names that function."""
    # A pc in the first page is where an unwinder without symbols lost its way.
    for i, pc in enumerate(pcs):
        if pc < 4096:
            pcs = pcs[:i]
            break
    lookups = [pc if i == 0 else pc - 1 for i, pc in enumerate(pcs)]
    out = []
    for i, (pc, (fn, lib, off)) in enumerate(zip(pcs, target.symbolize(lookups))):
        out.append(NativeFrame(pc=pc, function=fn, library=lib, offset=off + (0 if i == 0 else 1) if fn else 0))
    return out


def target_info(target):
    inferior = gdb.selected_inferior()
    exe = target.executable or gdb.current_progspace().filename
    info = TargetInfo(kind=target.kind, pid=target.pid or inferior.pid or None, executable=exe)
    if target.kind == "core":
        from pyhang_gdb.session import core_path
        info.core = core_path()
    return info


def executable_warnings(target):
    """gdb's idea of the executable against the target's own record."""
    given = gdb.current_progspace().filename
    if given is None:
        return ["gdb was given no executable; pyhang reads symbols from the files the target mapped"]
    if target.executable and os.path.realpath(given) != os.path.realpath(target.executable):
        return ["gdb was given the executable %s, but the target runs %s: gdb's own frames may be wrong; "
                "pyhang reads %s" % (given, target.executable, target.executable)]
    return []


def build_report(native_depth=DEFAULT_NATIVE_DEPTH):
    target = SESSION.target()
    report = Report(target=target_info(target))
    report.warnings.extend(target.warnings)
    report.warnings.extend(executable_warnings(target))
    for snap in collect.snapshot_threads(native_depth):
        th = ThreadReport(tid=snap.tid, gdb_num=snap.num, name=snap.name, problem=snap.problem)
        th.native_frames = native_frames(target, snap.pcs)
        report.threads.append(th)
    return report


class PyhangPrefix(PyhangCommand):
    """pyhang: why is this Python program stuck?

Subcommands:
  pyhang report [--json] [--native-depth N]   every thread: native frames (and, as decoded, Python frames, GIL, locks)
  pyhang version                              pyhang and the Python gdb embeds"""
    name = "pyhang"
    prefix = True

    def run(self, argv):
        print(self.__doc__)


class PyhangReport(PyhangCommand):
    """pyhang report [--json] [--native-depth N]: every thread of the target, what it runs and what it waits for.

--json prints the "pyhang-report/1" document that scripts rely on."""
    name = "pyhang report"

    def run(self, argv):
        p = parser("pyhang report", "every thread of the target")
        p.add_argument("--json", action="store_true")
        p.add_argument("--native-depth", type=int, default=DEFAULT_NATIVE_DEPTH)
        args = p.parse_args(argv)
        report = build_report(native_depth=max(1, args.native_depth))
        if args.json:
            print(json.dumps(to_json(report), indent=1))
        else:
            print(render.render_text(report))


class PyhangVersion(PyhangCommand):
    """pyhang version: versions of pyhang, its native module and gdb's Python."""
    name = "pyhang version"

    def run(self, argv):
        import sys
        print("pyhang (schema %s), native module %s, gdb %s with Python %d.%d.%d" % (
            __import__("pyhang").SCHEMA, native.__file__, gdb.VERSION, *sys.version_info[:3]))


def register():
    for cls in (PyhangPrefix, PyhangReport, PyhangVersion):
        cls()

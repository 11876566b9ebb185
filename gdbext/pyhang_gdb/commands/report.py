"""`pyhang` (the prefix), `pyhang report`, `pyhang snapshot`, `pyhang lock-objects`, `pyhang version`."""
import json
import os
import sys

import gdb

import _pyhang_native as native
import pyhang
from pyhang.analysis import completeness, gather
from pyhang.analysis.report import analyse
from pyhang.model.facts import Recording
from pyhang.render import json as render_json
from pyhang.render.text import render_text
from pyhang_gdb import collect, facts, loader, settings, status
from pyhang_gdb.commands.base import ArgumentError, PyhangCommand, no_arguments, parser


class PyhangPrefix(PyhangCommand):
    """pyhang: why is this Python program stuck?

Subcommands:
  pyhang report [--json] [--native-depth N] [--locals] [--merged]
                                              every thread: native frames (and, as decoded, Python frames, GIL, locks)
  pyhang report --tree [--json]               this process and its descendants, deadlocks across them first
  pyhang snapshot FILE                        save what pyhang collected, to analyse again without the target
  pyhang lock-objects FILE ADDRESS...         (what --tree asks of a parent: the threading locks at these addresses)
  pyhang version                              pyhang and the Python gdb embeds
Commands: py-bt / pyhang-py-bt (Python backtrace of the selected thread), py-locals, py-print NAME,
py-list, py-up, py-down, py-bt-full (libpython.py's names, also as pyhang-py-...), gil-holder,
lock-owner (what the selected thread waits on; `thread apply all lock-owner`),
py-tasks (asyncio: every event loop and task, what each awaits),
fork-hazards (what a fork child inherited that can never be released).
Settings (show pyhang): set pyhang unwinder native|gdb, set pyhang reader auto|gdb,
set pyhang native-depth N, set pyhang frame-filter on|off."""
    name = "pyhang"
    prefix = True

    def run(self, argv):
        print(self.__doc__)


# Native frames unwound per thread for --merged: the pairing needs every
# evaluation-loop frame of the stack.
MERGED_NATIVE_DEPTH = 512


def _depth(value):
    """The native depth asked for: --native-depth, else `set pyhang
    native-depth`; None (automatic) when neither gives one."""
    if value is None:
        value = settings.value("native-depth")
    return max(1, value) if value else None


class PyhangReport(PyhangCommand):
    """pyhang report [--json [--pretty]] [--native-depth N] [--locals] [--merged] [--tree]: every thread of the target, what it runs and what it waits for.

--json prints the "pyhang-report/1" document that scripts rely on; --locals adds each Python
frame's locals (arguments, locals, cells, free variables; module globals at module level);
--merged shows native and Python frames as one stack, each evaluation-loop frame followed by the
Python frames it runs (in JSON: python_frames[].native_frame)."""
    name = "pyhang report"

    def run(self, argv):
        p = parser("pyhang report", "every thread of the target")
        p.add_argument("--json", action="store_true")
        p.add_argument("--pretty", action="store_true", help="with --json: indented")
        p.add_argument("--native-depth", type=int, default=None,
                       help="native frames per thread (default %d, more for blocked threads when "
                            "a lock's owner must be guessed)" % gather.DEFAULT_NATIVE_DEPTH)
        p.add_argument("--tree", action="store_true",
                       help="also every descendant of this live process, each by its own gdb, and the "
                            "deadlocks across them")
        p.add_argument("--locals", action="store_true", help="the locals of every Python frame")
        p.add_argument("--merged", action="store_true",
                       help="native and Python frames as one stack (native frames %d deep unless given)"
                            % MERGED_NATIVE_DEPTH)
        args = p.parse_args(argv)
        depth = _depth(args.native_depth) or (MERGED_NATIVE_DEPTH if args.merged else None)
        _, report = facts.report(native_depth=depth, locals=args.locals)
        if args.tree:
            self.tree(report, args)
            return
        status.deadlocks(len(report.deadlocks))
        status.incomplete(completeness.incomplete(report))
        if args.json and not args.pretty:
            written = False
            try:
                for piece in render_json.pieces(report, merged=args.merged):
                    sys.stdout.write(piece)
                    written = True
            finally:  # a failure's one line then stands on a line of its own
                if written:
                    sys.stdout.write("\n")
        elif args.json:
            print(render_json.dumps(report, pretty=True, merged=args.merged))
        else:
            print(render_text(report, merged=args.merged))


    def tree(self, report, args):
        # Imported here: the thread pool, temporary files and the tree's model
        # cost every gdb session their import time, and only --tree uses them.
        from pyhang import processes
        from pyhang.render import tree as render_tree
        if report.target.kind == "core" or not report.target.pid:
            raise ArgumentError("pyhang report --tree: needs a live process; for cores, give one core per "
                               "process to the command line: pyhang report CORE CORE...")
        tree = processes.live_tree(report.target.pid, root_report=report,
                                   gdbext=os.path.join(loader.ROOT, "gdbext", "pyhang.gdb"),
                                   root_lock_objects=collect.lock_objects)
        status.deadlocks(len(tree.deadlocks) + sum(len(p.report.deadlocks) for p in tree.processes if p.report))
        status.incomplete(u for p in tree.processes if p.report for u in completeness.incomplete(p.report))
        print(render_tree.dumps(tree, pretty=args.pretty) if args.json else render_tree.render_tree_text(tree))


class PyhangSnapshot(PyhangCommand):
    """pyhang snapshot FILE [--native-depth N]: save everything `pyhang report` collected
from the target (threads, registers, native frames, the decoded interpreter, lock and
fork facts) as JSON.  The report can be made again from it without gdb or the target:
`python3 -m pyhang report --snapshot FILE`."""
    name = "pyhang snapshot"

    def run(self, argv):
        p = parser("pyhang snapshot", "save what pyhang collected")
        p.add_argument("file")
        p.add_argument("--native-depth", type=int, default=None)
        args = p.parse_args(argv)
        recording = Recording(facts.facts())
        options = {"native_depth": _depth(args.native_depth)}
        snapshot, report = analyse(recording, **options)
        with open(args.file, "w") as f:
            json.dump(recording.to_dict(options), f, separators=(",", ":"))
        print("pyhang: snapshot of %d threads written to %s" % (len(snapshot.threads), args.file))


def _address(text):
    """An address as gdb prints it (0x7f..., or decimal)."""
    return int(text, 0)


_address.__name__ = "address"


class PyhangLockObjects(PyhangCommand):
    """pyhang lock-objects FILE ADDRESS...: write as JSON what is at each address in this process:
whether it is a threading Lock or RLock, alive and locked, and which threads reference it on
their innermost Python frames (where).  `pyhang report --tree` asks a fork parent this about the
locks its children wait on: fork keeps addresses, so a child's copy is the parent's object at the
same address, unless the parent has freed it since."""
    name = "pyhang lock-objects"

    def run(self, argv):
        p = parser("pyhang lock-objects", "the threading locks at these addresses")
        p.add_argument("file")
        p.add_argument("addresses", nargs="+", type=_address)
        args = p.parse_args(argv)
        found = collect.lock_objects(args.addresses)
        with open(args.file, "w") as f:
            json.dump(found, f, separators=(",", ":"))
        print("pyhang: %d lock objects written to %s" % (len(found), args.file))


class PyhangVersion(PyhangCommand):
    """pyhang version: versions of pyhang, its native module and gdb's Python."""
    name = "pyhang version"

    def run(self, argv):
        no_arguments(self.name, "versions", argv)
        print("pyhang %s (schema %s), native module %s, gdb %s with Python %d.%d.%d" % (
            pyhang.VERSION, pyhang.SCHEMA, native.__file__, gdb.VERSION, *sys.version_info[:3]))


COMMANDS = (PyhangPrefix, PyhangReport, PyhangSnapshot, PyhangLockObjects, PyhangVersion)

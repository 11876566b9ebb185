"""`pyhang` (the prefix), `pyhang report`, `pyhang snapshot`, `pyhang lock-objects`, `pyhang version`."""
import json
import os
import sys

import gdb

import _pyhang_native as native
import pyhang
from pyhang import options
from pyhang.analysis.report import analyse
from pyhang.model.facts import Facts, Recording, encode, frame_sequence
from pyhang.render import json as render_json
from pyhang.render.text import render_text
from pyhang_gdb import facts, loader, settings
from pyhang_gdb.commands.base import (ArgumentError, InternalCommand, PyhangCommand, complete_options, failure,
                                      failure_kind, no_arguments, parser)

# The JSON line is written to gdb's stdout this many characters at a time, not a thread at a time.
WRITE_AT = 1 << 16


class PyhangPrefix(PyhangCommand):
    """pyhang: why is this Python program stuck?

Subcommands:
  pyhang report [--json | --dot] [--native-depth N] [--locals] [--merged]
                                              every thread: native frames (and, as decoded, Python frames, GIL, locks)
  pyhang report --tree [--json]               this process and its descendants, deadlocks across them first
  pyhang snapshot FILE                        save what pyhang collected, to analyse again without the target
  pyhang gcore [FILE]                         a core of the process with every thread's stack and its /proc facts
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

    def invoke(self, arg, from_tty):
        word, _, rest = arg.strip().partition(" ")
        internal = INTERNAL.get(word)
        if internal is not None:
            internal.invoke(rest, from_tty)
        else:
            super().invoke(arg, from_tty)

    def run(self, argv):
        if argv:
            raise ArgumentError("pyhang: no subcommand %r (help pyhang lists them)" % argv[0])
        print(self.__doc__)


def _setting_depth(value):
    """The native depth asked for: --native-depth, else `set pyhang
    native-depth`; None (automatic) when neither gives one."""
    if value is None:
        value = settings.value("native-depth")
    return value or None


class PyhangReport(PyhangCommand):
    """pyhang report [--json [--pretty] | --dot] [--native-depth N] [--locals] [--merged] [--tree]: every thread of the target, what it runs and what it waits for.

--json prints the "pyhang-report/1" document that scripts rely on; --locals adds each Python
frame's locals (arguments, locals, cells, free variables; module globals at module level);
--merged shows native and Python frames as one stack, each evaluation-loop frame followed by the
Python frames it runs (in JSON: python_frames[].native_frame)."""
    name = "pyhang report"

    def complete(self, text, word):
        return complete_options(options.report_flags(), text, word)

    def run(self, argv):
        p = parser("pyhang report", "every thread of the target")
        options.add_report_options(p)
        args = p.parse_args(argv)
        depth = options.native_depth(_setting_depth(args.native_depth), args.merged)
        _, report = facts.report(native_depth=depth, locals=args.locals)
        if args.tree:
            self.tree(report, args)
            return
        if args.dot:
            from pyhang.render.dot import report_dot
            sys.stdout.write(report_dot(report))
        elif args.json and not args.pretty:
            written, held, size = False, [], 0
            try:
                # gdb's stdout writes each write at once (gdb.write): pieces go out WRITE_AT characters at a time
                for piece in render_json.pieces(report, merged=args.merged):
                    held.append(piece)
                    size += len(piece)
                    if size >= WRITE_AT:
                        sys.stdout.write("".join(held))
                        written, held, size = True, [], 0
            finally:  # a failure's one line then stands on a line of its own
                if held:
                    sys.stdout.write("".join(held))
                if written or held:
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
                                   root_lock_objects=facts.facts().lock_objects)
        if args.dot:
            from pyhang.render.dot import tree_dot
            sys.stdout.write(tree_dot(tree))
        else:
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
        made_with = {"native_depth": options.native_depth(_setting_depth(args.native_depth), False)}
        snapshot, report = analyse(recording, **made_with)
        with open(args.file, "w") as f:
            f.write(recording.dumps(made_with))
        print("pyhang: snapshot of %d threads written to %s" % (len(snapshot.threads), args.file))


def _address(text):
    """An address as gdb prints it (0x7f..., or decimal)."""
    return int(text, 0)


_address.__name__ = "address"


class PyhangLockObjects(InternalCommand):
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
        found = facts.facts().lock_objects(args.addresses)
        with open(args.file, "w") as f:
            json.dump(encode("lock_objects", found), f, separators=(",", ":"))
        print("pyhang: %d lock objects written to %s" % (len(found), args.file))


class PyhangServeFacts(InternalCommand):
    """pyhang serve-facts QUESTIONS ANSWERS: answer the analysis's questions about this target
(pyhang.model.facts), one JSON line each, read from file descriptor QUESTIONS, each answer written as
one JSON line to file descriptor ANSWERS ({"answer": ...} or {"error": "why", "failure": its kind, a
model.kinds.CommandFailure}), until QUESTIONS ends.
The `pyhang` command line asks this way and analyses in its own process (pyhang/gdb_pipe.py)."""
    name = "pyhang serve-facts"

    def run(self, argv):
        p = parser("pyhang serve-facts", "answer the analysis's questions")
        p.add_argument("questions", type=int)
        p.add_argument("answers", type=int)
        args = p.parse_args(argv)
        with os.fdopen(args.questions, "r") as questions, os.fdopen(args.answers, "w") as answers:
            try:
                target_facts = facts.facts()
                target_facts.target()  # no target: said before any question
            except Exception as exc:  # noqa: BLE001 — the asker gets the one line, as the prompt would
                _reply(answers, _failure(self.name, exc))
                raise
            for line in questions:
                question, arguments = json.loads(line)
                try:
                    if question not in Facts.QUESTIONS:
                        raise ArgumentError("no question %r" % question)
                    reply = {"answer": encode(question, getattr(target_facts, question)(*arguments))}
                except Exception as exc:  # noqa: BLE001 — one line to the asker; the session goes on
                    reply = _failure(self.name, exc)
                _reply(answers, reply)


def _failure(name, exc):
    """The error reply of `exc`: its one line, and its kind for the asker to decide on."""
    return {"error": failure(name, exc), "failure": failure_kind(exc)}


def _reply(out, reply):
    out.write(json.dumps(reply, separators=(",", ":"), default=frame_sequence))
    out.write("\n")
    out.flush()


class PyhangVersion(PyhangCommand):
    """pyhang version: versions of pyhang, its native module and gdb's Python."""
    name = "pyhang version"

    def run(self, argv):
        no_arguments(self.name, "versions", argv)
        print("pyhang %s (schema %s), native module %s, gdb %s with Python %d.%d.%d" % (
            pyhang.VERSION, pyhang.SCHEMA, native.__file__, gdb.VERSION, *sys.version_info[:3]))


COMMANDS = (PyhangPrefix, PyhangReport, PyhangSnapshot, PyhangVersion)

# `pyhang WORD ...` that the prefix runs: pyhang's own, not listed for users.
INTERNAL = {c.name.split(" ", 1)[1]: c() for c in (PyhangLockObjects, PyhangServeFacts)}

"""The `pyhang` command line.  `report` analyses and renders here: of a live
process pyhang stops every thread itself (pyhang.stopped) or, with --no-stop
and wherever a stop would cut a transfer short, reads it without stopping it
(pyhang.nostop), no gdb either way; of a core (or with --gdb) a gdb of its
own opens the target and answers what only a debugger knows over a pipe
(pyhang.gdb_batch, pyhang.gdb_pipe).  The other commands of one process
render from the same analysis (pyhang.thread_commands); gcore runs in gdb
in batch mode, as a user would type it.  See `pyhang --help` (pyhang.cli_help's epilog) for the
contract scripts rely on."""
import argparse
import gc
import importlib
import json
import os
import sys

from pyhang import SCHEMA, VERSION, checkout, options, transfers
from pyhang.failure import Failure
from pyhang.help_format import Formatter as _Formatter

ERROR_SCHEMA = "pyhang-error/1"

# Exit statuses: the contract of the command line.
from pyhang.model.kinds import ExitStatus  # noqa: E402 (the contract: one table, model.kinds)
from pyhang.model.live_kinds import WatchEnd  # noqa: E402

OK, FAILED, USAGE, DEADLOCK, INCOMPLETE, HUNG = (ExitStatus.OK, ExitStatus.FAILED, ExitStatus.USAGE,
                                                 ExitStatus.DEADLOCK, ExitStatus.INCOMPLETE, ExitStatus.HUNG)

from pyhang.cli_help import COMMANDS, EPILOG, SHORT_USAGE, command_help, command_name  # noqa: E402

def parser():
    p = argparse.ArgumentParser(prog="pyhang", description="Why is this Python program stuck?",
                                usage=SHORT_USAGE, epilog=EPILOG, formatter_class=_Formatter)
    p.add_argument("--version", action="version", version="pyhang %s (%s)" % (VERSION, SCHEMA))
    p.add_argument("what", type=command_name, metavar="COMMAND",
                   help="; ".join("%s: %s" % (k, v[2]) for k, v in COMMANDS.items()))
    p.add_argument("-p", "--pid", type=int, help="a live process")
    p.add_argument("paths", nargs="*", metavar="CORE [EXECUTABLE] | CORE CORE...",
                   help="a core file and its executable (default: what the core names); report: several cores, "
                        "one per process of a tree")
    options.add_report_options(p)
    p.add_argument("--no-stop", action="store_true",
                   help="report -p PID: read the process without stopping it (no gdb, no ptrace): nothing it does "
                        "is interrupted; threads that run are shown as running")
    p.add_argument("--stop", action="store_true",
                   help="-p PID: stop the process even where a stop would cut a thread's write on a pipe or socket "
                        "short (without it, report reads such a process without stopping it)")
    p.add_argument("--gdb", action="store_true",
                   help="-p PID: stop and read the process through gdb (its attach and, for a frame no unwind "
                        "table covers, its unwinder) rather than by pyhang's own stop")
    p.add_argument("--snapshot", metavar="FILE", help="report: analyse a snapshot saved by `pyhang snapshot FILE`")
    p.add_argument("--once", action="store_true",
                   help="report -p PID: one look only (without it, a second look that does not stop the process "
                        "says, per blocked thread, whether it moved)")
    p.add_argument("--interval", type=float, metavar="S", default=None,
                   help="report -p PID: seconds between the two no-stop looks of the second look (default %s); "
                        "watch: between its looks (default %s)" % (SECOND_LOOK_INTERVAL, WATCH_INTERVAL))
    p.add_argument("--after", type=float, metavar="S", default=None,
                   help="watch: seconds the process stands still before its report (default %s)" % WATCH_AFTER)
    p.add_argument("--for", type=float, metavar="S", default=None, dest="watch_for",
                   help="watch: seconds to watch at most (default: until it ends or a report names a problem)")
    p.add_argument("--sysroot", metavar="DIR",
                   help="core: the core's files are under DIR (DIR/usr/lib/..., as on the machine it came from)")
    p.add_argument("--lib-search-path", metavar="DIR[:DIR]",
                   help="core: directories holding the core's executable and libraries by file name")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="gcore: the core's file (default core.PID); with --tree the prefix of each PREFIX.PID")
    return p


def is_core(path):
    """Whether `path` is an ELF core file (e_type ET_CORE)."""
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return False
    return len(head) == 18 and head[:4] == b"\x7fELF" and int.from_bytes(head[16:18], "little") == 4


def _targets(p, args):
    """args.core, args.executable and args.cores from the positional paths."""
    paths = args.paths
    args.core = args.executable = None
    args.cores = []
    if len(paths) >= 3 or (len(paths) == 2 and is_core(paths[1])):
        if args.what != "report":
            p.error("several cores go with `report` only")
        args.cores = list(paths)
    elif paths:
        args.core = paths[0]
        args.executable = paths[1] if len(paths) == 2 else None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    # A report is tens of thousands of records, dicts and lists, made once and
    # printed: the cycle collector, run after every 700 of them, freed nothing
    # and took a twentieth of a report of a thousand threads.
    gc.set_threshold(50_000, 10, 10)
    named = [a for a in argv if a in COMMANDS]
    if named and ("-h" in argv or "--help" in argv):
        sys.stdout.write(command_help(named[0]))
        return OK
    if argv[:1] == ["job-node"]:     # the node's half of `pyhang job` (pyhang.jobs)
        from pyhang import jobs
        return jobs.node_main(argv[1:])
    if argv[:1] == ["job"]:
        from pyhang import merge_commands
        return merge_commands.job(argv[1:])
    p = parser()
    if not argv:   # what to type, not argparse's list of missing arguments
        p.print_usage(sys.stderr)
        return USAGE
    args = p.parse_intermixed_args(argv)
    if args.pretty and not args.json:
        p.error("--pretty goes with --json: it indents the JSON document")
    if args.what == "merge":
        from pyhang import merge_commands
        return merge_commands.merge(p, args)
    if args.what == "gcore":
        return gcore(p, args)
    if args.what == "watch":
        return watch(p, args)
    if args.after is not None or args.watch_for is not None:
        p.error("%s goes with `watch` only" % ("--after" if args.after is not None else "--for"))
    if args.output is not None:
        p.error("-o goes with `gcore` only")
    _targets(p, args)
    report_only = [o for o, v in (("--pretty", args.pretty), ("--native-depth", args.native_depth is not None),
                                  ("--snapshot", args.snapshot), ("--tree", args.tree), ("--locals", args.locals),
                                  ("--merged", args.merged), ("--dot", args.dot)) if v]
    if args.dot and args.json:
        p.error("--dot goes without --json")
    if args.what != "report" and (report_only or args.json):
        p.error("%s goes with `report` only" % (report_only or ["--json"])[0])
    if (args.once or args.interval is not None) and (args.what != "report" or args.pid is None):
        p.error("%s goes with `report -p PID`" % ("--once" if args.once else "--interval"))
    if args.once and args.interval is not None:
        p.error("--once goes without --interval")
    if args.interval is not None and not 0 < args.interval <= 60:
        p.error("--interval takes seconds, more than 0 and at most 60")
    if (args.no_stop or args.stop or args.gdb) and args.pid is None:
        p.error("%s goes with -p PID" % ("--no-stop" if args.no_stop else "--stop" if args.stop else "--gdb"))
    if args.gdb and args.no_stop:
        p.error("--gdb goes without --no-stop: gdb stops the process")
    if args.no_stop and (args.stop or args.what not in NOT_STOPPED):
        p.error("--no-stop goes with %s, and without --stop" % ", ".join("`%s`" % c for c in NOT_STOPPED))
    if args.snapshot:
        if args.pid is not None or args.core or args.cores or args.tree:
            p.error("--snapshot goes without -p, cores or --tree")
        return report_from_snapshot(args.snapshot, args)
    if args.tree or args.cores:
        if args.tree and (args.pid is None or args.core or args.cores):
            p.error("--tree goes with -p PID; for cores, give one core per process: pyhang report CORE CORE...")
        if args.cores and args.pid is not None:
            p.error("give either -p PID or cores")
        if args.pid is not None and (args.sysroot or args.lib_search_path):
            p.error("%s goes with core files" % ("--sysroot" if args.sysroot else "--lib-search-path"))
        return report_tree(args)
    if (args.pid is None) == (args.core is None):
        p.error("give either -p PID or a core file")
    if args.pid is not None and (args.sysroot or args.lib_search_path):
        p.error("%s goes with a core file" % ("--sysroot" if args.sysroot else "--lib-search-path"))
    args.cut_short = [] if args.pid is None or args.stop or args.no_stop else transfers.cut_short(args.pid)
    if args.no_stop or args.cut_short:
        return report_live(args, stopping=False)
    if args.pid is not None and not args.gdb:
        return report_live(args, stopping=True)
    return report_one(args)


def report_one(args):
    """`pyhang report` (or another command, pyhang.thread_commands) of a core,
    or of a live process with --gdb, through gdb: analysed and rendered here.
    gdb starts first: it opens the target while this process loads the analysis."""
    from pyhang import gdb_batch
    try:
        pipe = gdb_batch.open_gdb(args)
    except Failure as f:
        return fail(f, args.json)
    _analysis_path()  # the native module, to read here what gdb need not send (gdb_pipe.read_here)
    try:
        importlib.import_module("pyhang.analysis.report")  # loadable here: else gdb may know why
    except ImportError as exc:  # gdb may know why (pyhang not built): its line first
        failure = gdb_batch.unopened(pipe, args)
        pipe.close()
        return fail(failure, args.json) if failure is not None else _no_analysis(exc, args.json)
    try:
        snapshot, report = gdb_batch.examine(pipe, args,
                                             native_depth=options.native_depth(args.native_depth, args.merged),
                                             locals=args.locals or args.what in ("py-bt-full", "py-locals"))
    except Failure as f:
        return fail(f, args.json)
    return _render_command(snapshot, report, args)


def _render(report, args):
    from pyhang.render import json as render_json
    from pyhang.render.text import render_text
    if args.dot:
        from pyhang.render.dot import report_dot
        sys.stdout.write(report_dot(report))
    elif args.json and not args.pretty:
        for piece in render_json.pieces(report, merged=args.merged):   # a thread at a time: never held whole
            sys.stdout.write(piece)
        sys.stdout.write("\n")
    elif args.json:
        print(render_json.dumps(report, pretty=True, merged=args.merged))
    else:
        print(render_text(report, merged=args.merged))


def _render_command(snapshot, report, args):
    """Prints what `args.what` asks of a report made here; its exit status
    (a report's own; OK for the other commands, which show, not conclude).
    A report of a live process takes its second look first (unless --once)."""
    if args.what == "report":
        if args.pid is not None:
            _concluded(report, args, args.interval, once=args.once)
        _render(report, args)
        return report.exit_status
    from pyhang import thread_commands
    print(thread_commands.render(args.what, snapshot, report))
    return OK


# Seconds between the two looks of a second look (`--interval`).
SECOND_LOOK_INTERVAL = 0.5


def _concluded(report, args, interval, once=False):
    """A live process's report, concluded: its second look (unless `once`; `interval`: seconds
    between its looks, None the default), and its children, which it does not look at (a hang in a
    child is not this process's all-clear to give)."""
    from pyhang import procfs
    if not once:
        second_look(report, args.pid, interval if interval is not None else SECOND_LOOK_INTERVAL)
    report.children = [pid for pid, _ in procfs.children(args.pid)]


def second_look(report, pid, interval):
    """Two no-stop looks at live process `pid` after the report's own, `interval` s apart, and what
    they mean for it (analysis.progress): each blocked thread moved or not; the exit status again."""
    from pyhang import second_look as looks
    from pyhang.analysis import completeness, progress
    progress.apply(report, looks.look(pid, [t.tid for t in report.threads], interval))
    report.exit_status = completeness.report_status(report)


# What a report made here holds (its facts with the native decoders' memory,
# its snapshot and records), kept to the end of the process: `python -m
# pyhang` ends it without freeing them one by one (pyhang/__main__.py).
KEPT = []

# The commands that read a live process without stopping it (--no-stop, or
# by default where a stop would cut a transfer short): every one that looks
# at a process.
NOT_STOPPED = tuple(c for c in COMMANDS if c not in ("merge", "job"))


def report_live(args, stopping):
    """`pyhang report` (or another command) of a live process, no gdb: stopped by pyhang itself for the
    read (`stopping`: pyhang.stopped) or read without stopping it (--no-stop, or because a stop would cut a
    transfer short: pyhang.nostop)."""
    _analysis_path()
    try:
        from pyhang import nostop, stopped  # noqa: F401 (loadable here: else why not, in one line)
    except ImportError as exc:
        return _no_analysis(exc, args.json)
    try:
        snapshot, report = _examined_live(args, stopping, KEPT)
    except Failure as f:
        return fail(f, args.json)
    return _render_command(snapshot, report, args)


def _examined_live(args, stopping, kept):
    """(snapshot, report) of live process args.pid, stopped for the read or not (`stopping`), or a Failure
    raised saying why it could not be stopped or read (or exited while it was)."""
    from pyhang import live_causes, nostop, procfs, stopped
    before = procfs.stat(args.pid)
    depth = options.native_depth(args.native_depth, args.merged)
    locals = args.locals or args.what in ("py-bt-full", "py-locals")
    try:
        if stopping:
            snapshot, report = stopped.examine(args.pid, native_depth=depth, locals=locals, kept=kept)
        else:
            snapshot, report = nostop.examine(args.pid, native_depth=depth, locals=locals,
                                              because=args.cut_short, kept=kept)
    except stopped.StopFailed as exc:
        message, what_to_do = live_causes.not_stopped(args.pid, before, exc.problem, exc.error)
        raise Failure(message, hint=what_to_do) from None
    except Exception as exc:  # noqa: BLE001 — one line, never a traceback
        message, what_to_do = not_read(args.pid, before, exc, stopping)
        raise Failure(message, hint=what_to_do) from None
    gone = not_read(args.pid, before, stopping=stopping) if before is not None else None
    if gone is not None:   # it exited while it was read: what was read is no report of it
        raise Failure(gone[0], hint=gone[1])
    return snapshot, report


# The defaults of `pyhang watch` (pyhang.watch): seconds between looks, seconds still before a report.
WATCH_INTERVAL, WATCH_AFTER = 1.0, 5.0


def watch(p, args):
    """`pyhang watch -p PID [--interval S] [--after S] [--for S] [--json]`: looks at the live process
    without stopping it (pyhang.watch) until it ends, --for's seconds pass, or its report, taken
    once it stood still --after s, names a problem: that report is printed, with its exit status."""
    others = [o for o, v in (("--tree", args.tree), ("--snapshot", args.snapshot), ("--dot", args.dot),
                             ("--once", args.once), ("--stop", args.stop), ("--sysroot", args.sysroot),
                             ("--lib-search-path", args.lib_search_path), ("-o", args.output)) if v]
    if others:
        p.error("%s does not go with `watch`" % others[0])
    if args.pid is None or args.paths:
        p.error("give the process: pyhang watch -p PID")
    if args.pretty and not args.json:
        p.error("--pretty goes with --json: it indents the JSON document")
    for name, value in (("--interval", args.interval), ("--after", args.after), ("--for", args.watch_for)):
        if value is not None and not 0 < value <= 86400:
            p.error("%s takes seconds, more than 0" % name)
    _analysis_path()
    try:
        import _pyhang_native as native
        from pyhang import procfs
        from pyhang import watch as watching
        from pyhang.render import watch as words
    except ImportError as exc:
        return _no_analysis(exc, args.json)
    before = procfs.stat(args.pid)
    try:
        target = native.Target.live(args.pid)
    except Exception as exc:  # noqa: BLE001 — gone, or no permission: one line
        message, what_to_do = not_read(args.pid, before, exc)
        return fail(Failure(message, hint=what_to_do), args.json)
    interval = args.interval if args.interval is not None else WATCH_INTERVAL
    after = args.after if args.after is not None else WATCH_AFTER
    args.what, args.cut_short, taken = "report", [], {}

    def report():
        try:
            _, taken["report"] = _examined_live(args, False, None)   # each report freed once it went on
        except Failure as f:
            taken["failure"] = f
            return FAILED
        _concluded(taken["report"], args, None)
        return taken["report"].exit_status

    sys.stderr.write(words.started(args.pid, interval, after, args.watch_for))
    outcome = watching.run(watching.LiveLooks(native, target, args.pid), report, interval=interval, after=after,
                           limit=args.watch_for,
                           on_report=lambda status, still: sys.stderr.write(words.went_on(args.pid, still)))
    if "failure" in taken and outcome.status == FAILED:
        return fail(taken["failure"], args.json)
    sys.stderr.write(words.ended(args.pid, outcome, after))
    if outcome.end == WatchEnd.PROBLEM:
        _render(taken["report"], args)
    return outcome.status


def not_read(pid, before, exc=None, stopping=False):
    """(message, hint) of why `pid` was not read, stopped by pyhang (`stopping`) or without stopping it
    (live_causes.not_read), or None."""
    from pyhang import live_causes
    from pyhang.render.failures import EXITED_DURING_READ, EXITED_DURING_STOP
    during = EXITED_DURING_STOP if stopping else EXITED_DURING_READ
    return live_causes.not_read(pid, before, live_causes.process_problem(pid, before, during), exc)


def gcore(p, args):
    """`pyhang gcore -p PID [-o FILE] [--tree]`: each core written by a gdb of its own (`pyhang
    gcore` in gdb); one line per process on stdout, one per process that got none on stderr.  OK
    when every process got its core (a zombie has none to give), else FAILED."""
    others = [o for o, v in (("--json", args.json), ("--pretty", args.pretty), ("--dot", args.dot),
                             ("--native-depth", args.native_depth is not None), ("--snapshot", args.snapshot),
                             ("--locals", args.locals), ("--merged", args.merged), ("--no-stop", args.no_stop),
                             ("--sysroot", args.sysroot), ("--lib-search-path", args.lib_search_path)) if v]
    if others:
        p.error("%s does not go with `gcore`" % others[0])
    if args.pid is None or args.paths:
        p.error("give the process: pyhang gcore -p PID [-o FILE]")
    _analysis_path()
    from pyhang import gdb_batch, processes
    from pyhang.render.gcore import not_written_text
    if not os.path.exists("/proc/%d" % args.pid):
        cause = gdb_batch.no_process(args.pid)
        return fail(Failure(cause, hint=gdb_batch.hint(args, cause)), False)
    stopping = processes.ALWAYS if args.stop else processes.AUTO
    if args.tree:
        done = processes.gcore_tree(args.pid, os.path.abspath(args.output or "core"), stopping=stopping)
    else:
        done = [(args.pid,) + processes.gcore(args.pid, os.path.abspath(args.output or "core.%d" % args.pid),
                                              stopping=stopping) + (False,)]
    for pid, line, why, _ in done:
        if line is not None:
            sys.stdout.write("pyhang: %s\n" % line)
        else:
            sys.stderr.write("pyhang: %s\n" % not_written_text(pid, why))
    return FAILED if any(line is None and not zombie for _, line, _, zombie in done) else OK


def fail(f, as_json):
    """Exit status FAILED, the reason on stderr (and as JSON on stdout with --json)."""
    sys.stderr.write("pyhang: %s\n" % f.message)
    for d in f.details:
        sys.stderr.write("  gdb: %s\n" % d)
    if f.hint:
        sys.stderr.write("  %s\n" % f.hint)
    if as_json:
        print(json.dumps({"schema": ERROR_SCHEMA, "pyhang_version": VERSION,
                          "error": {"message": f.message, "gdb": f.details, "hint": f.hint}}))
    return FAILED


def _analysis_path():
    """The native module, for reading a target here (--no-stop, and what gdb
    need not send), and process trees; not for the analysis."""
    checkout.native_path()


def _no_analysis(exc, as_json):
    from pyhang import native_module
    build = os.environ.get("PYHANG_BUILD_DIR") or os.path.join(checkout.ROOT, "build")
    return fail(Failure(native_module.problem(checkout.ROOT, build, exc)), as_json)


def report_tree(args):
    """A process and its descendants (-p PID --tree: each stopped by pyhang itself, or with --gdb by a gdb
    of its own), or one core per process (each opened by a gdb of its own), then the deadlocks across them."""
    _analysis_path()
    from pyhang import gdb_batch
    try:
        from pyhang import processes
        from pyhang.render import tree as render_tree
    except ImportError as exc:
        return _no_analysis(exc, args.json)
    if args.pid is not None and not os.path.exists("/proc/%d" % args.pid):
        cause = gdb_batch.no_process(args.pid)
        return fail(Failure(cause, hint=gdb_batch.hint(args, cause)), args.json)
    stopping = processes.NEVER if args.no_stop else processes.ALWAYS if args.stop else processes.AUTO
    interval = None if args.once else args.interval if args.interval is not None else SECOND_LOOK_INTERVAL
    tree = processes.live_tree(args.pid, stopping=stopping, look_interval=interval, own_stop=not args.gdb) \
        if args.pid is not None else \
        processes.core_tree(args.cores, sysroot=args.sysroot, lib_search_path=args.lib_search_path)
    if args.dot:
        from pyhang.render.dot import tree_dot
        sys.stdout.write(tree_dot(tree))
    else:
        print(render_tree.dumps(tree, args.pretty) if args.json else render_tree.render_tree_text(tree))
    return tree.exit_status


def report_from_snapshot(path, args):
    """The report of a saved snapshot, made here without gdb and without
    the native module (the analysis is plain Python): on any Python 3,
    on any machine the snapshot is copied to."""
    from pyhang.analysis.report import from_snapshot
    try:
        with open(path) as f:
            document = json.load(f)
    except (OSError, ValueError) as exc:
        return fail(Failure("cannot read the snapshot %s: %s" % (path, exc)), args.json)
    try:
        _, report = from_snapshot(document)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return fail(Failure("the snapshot %s is not one pyhang wrote (%s: %s)" % (path, type(exc).__name__, exc)),
                    args.json)
    _render(report, args)
    return report.exit_status


if __name__ == "__main__":
    sys.exit(main())

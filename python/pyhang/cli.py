"""The `pyhang` command line: runs gdb in batch mode on a process or a core
with pyhang loaded, exactly as a user would, and prints only pyhang's answer.
See `pyhang --help` (the epilog below) for the contract scripts rely on."""
import argparse
import difflib
import json
import re
import os
import subprocess
import sys

from pyhang import SCHEMA, VERSION, options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GDBEXT = os.path.join(ROOT, "gdbext", "pyhang.gdb")
ERROR_SCHEMA = "pyhang-error/1"

# Exit statuses: the contract of the command line.
OK, FAILED, USAGE, DEADLOCK, INCOMPLETE = 0, 1, 2, 3, 4

# command → (gdb command, takes --json/--pretty/--native-depth, what it prints)
COMMANDS = {
    "report": ("pyhang report", True, "every thread, what it waits for and who holds it; deadlocks first"),
    "py-bt": ("thread apply all pyhang-py-bt", False, "the Python stack of every thread"),
    "gil-holder": ("gil-holder", False, "who holds the GIL, who waits for it"),
    "lock-owner": ("thread apply all lock-owner", False, "what each thread waits on and who holds it"),
    "fork-hazards": ("fork-hazards", False, "what a fork child inherited that can never be released"),
    "py-bt-full": ("thread apply all pyhang-py-bt-full", False,
                   "the Python stack of every thread with each frame's arguments"),
    "py-locals": ("thread apply all pyhang-py-locals", False, "the locals of every thread's innermost Python frame"),
    "py-tasks": ("py-tasks", False, "every asyncio task, what it awaits, await cycles, blocked event loops"),
    "merge": (None, True, "reports of many processes (ranks, hosts) grouped by Python stack; the odd ones out"),
}

# command → its own --help: the options it takes and examples.
COMMAND_HELP = {
    "report": """options: --json [--pretty], --native-depth N, --locals, --merged, --tree, --snapshot FILE,
         --sysroot DIR, --lib-search-path DIR[:DIR] (cores)
examples:
  pyhang report -p 1234                  every thread, deadlocks first
  pyhang report --json --pretty -p 1234  the pyhang-report/1 document, indented
  pyhang report --locals -p 1234         with the locals of every Python frame
  pyhang report --merged -p 1234         native and Python frames as one stack
  pyhang report --tree -p 1234           the process and its descendants
  pyhang report core.1234 /usr/bin/python3.11 --sysroot /srv/cores/host1
  pyhang report core.1234 core.1240 --sysroot /srv/cores/host1   one core per process of a tree
  pyhang report --snapshot hang.json     a snapshot saved in gdb by `pyhang snapshot FILE`""",
    "py-bt": "examples:\n  pyhang py-bt -p 1234\n  pyhang py-bt core.1234",
    "py-bt-full": "examples:\n  pyhang py-bt-full -p 1234     each frame with its arguments",
    "py-locals": "examples:\n  pyhang py-locals -p 1234      the innermost Python frame's locals, every thread",
    "py-tasks": "examples:\n  pyhang py-tasks -p 1234       asyncio tasks per event loop, await cycles",
    "gil-holder": "examples:\n  pyhang gil-holder -p 1234",
    "lock-owner": "examples:\n  pyhang lock-owner -p 1234\n  pyhang lock-owner core.1234",
    "fork-hazards": "examples:\n  pyhang fork-hazards -p 1234   a fork child: what it inherited that can never be released",
    "merge": """options: --json [--pretty]
examples:
  pyhang merge /shared/hang/*.json       reports (pyhang report --json) of every rank, grouped
  pyhang merge --json a.json tree.json   the pyhang-merge/1 document; a pyhang-tree/1 counts each process""",
}


def command_help(name):
    """`pyhang COMMAND --help`: what the command prints, its options, examples."""
    usage = "REPORT.json..." if name == "merge" else "(-p PID | CORE [EXECUTABLE])"
    return "usage: pyhang %s %s\n\n%s: %s\n\n%s\n" % (name, usage, name, COMMANDS[name][2], COMMAND_HELP[name])


EPILOG = """\
examples:
  pyhang report -p 1234                  a live process (gdb attaches, reads, detaches)
  pyhang report --json -p 1234           the pyhang-report/1 JSON document (docs/json-contract.md)
  pyhang report core.1234                a core; the executable is the one the core names
  pyhang report core.1234 /usr/bin/python3.11
  pyhang lock-owner -p 1234              also: py-bt, py-bt-full, py-locals, py-tasks, gil-holder, fork-hazards
  pyhang report --snapshot hang.json     a snapshot saved in gdb by `pyhang snapshot FILE`
  pyhang report --tree -p 1234           the process and its descendants, deadlocks across them first
  pyhang report core.1234 core.1240 ...  one core per process, as a tree (parents from the cores)
  pyhang merge /shared/hang/*.json       many ranks' reports grouped by Python stack, the odd ones out

exit status:
  0  the report was made (for `report`: and it found no deadlock, having read what it
     needs to rule one out)
  3  `report` was made and found at least one deadlock
  4  `report` was made and found no deadlock, but is incomplete: the Python state of a
     Python process, or glibc's lock layouts while threads sleep on futexes, could not
     be read, so no deadlock can be ruled out; its "incomplete" verdict says what could
     not be read and what still holds (--tree: in some process)
  1  pyhang could not look at the target; the reason is on stderr (with --json,
     a {"schema": "pyhang-error/1", "error": {...}} document on stdout too)
  2  the arguments are wrong
"""


class Failure(Exception):
    def __init__(self, message, details=(), hint=None):
        super().__init__(message)
        self.message, self.details, self.hint = message, list(details), hint


# Where separate debug files are (gdb's default); pyhang reads their symbol
# tables itself (PYHANG_DEBUG_FILE_DIRECTORY), so gdb need not load their
# DWARF: with libc6-dbg installed that alone took 0.2 s of every run.
DEBUG_FILE_DIRECTORY = "/usr/lib/debug"


def gdb_env():
    """The environment gdb runs in: pyhang inside it names frames from the
    debug files gdb itself is told not to load (gdb_argv)."""
    return dict(os.environ, PYHANG_DEBUG_FILE_DIRECTORY=os.environ.get("PYHANG_DEBUG_FILE_DIRECTORY",
                                                                        DEBUG_FILE_DIRECTORY))


def gdb_argv(command, pid=None, core=None, executable=None, gdbext=GDBEXT, sysroot=None, lib_search_path=None):
    # No DWARF of separate debug files and no auto-loaded Python scripts
    # (pretty-printers, libpython.py): nothing pyhang's commands use.
    argv = ["gdb", "-nx", "-batch", "-iex", "set pagination off", "-iex", "set debug-file-directory",
            "-iex", "set auto-load python-scripts off"]
    # Where a core's files are now: gdb and pyhang both look there (before the core is loaded).
    if sysroot:
        argv += ["-iex", "set sysroot " + os.path.abspath(sysroot)]
    if lib_search_path:
        argv += ["-iex", "set solib-search-path " + ":".join(os.path.abspath(d) for d in lib_search_path.split(":") if d)]
    if executable:
        argv.append(executable)
    if pid is not None:
        argv += ["-p", str(pid)]
    if core:
        argv += ["-c", core]
    argv += ["-ex", "source " + gdbext]
    if command is None:  # the caller adds its own (pyhang.gdb_pipe)
        return argv
    # After the command: how it ended (pyhang_gdb/status.py), behind a marker;
    # nothing (and no traceback) when pyhang did not load.
    return argv + ["-ex", "echo %s\\n" % _BEGIN, "-ex", command, "-ex", _STATUS]


# What the command prints comes after this line (gdb's attach chatter before it).
_BEGIN = "@@pyhang-output@@"


_STATUS = ('python exec("try:\\n from pyhang_gdb import status\\nexcept ImportError:\\n pass\\n'
           'else:\\n print(status.line())")')


def _command(name):
    """A command's name, or an error that suggests the nearest one."""
    if name in COMMANDS:
        return name
    near = difflib.get_close_matches(name, COMMANDS, n=1)
    raise argparse.ArgumentTypeError("unknown command %r%s (commands: %s)" % (
        name, "; did you mean %r?" % near[0] if near else "", ", ".join(COMMANDS)))


def parser():
    p = argparse.ArgumentParser(prog="pyhang", description="Why is this Python program stuck?",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version="pyhang %s (%s)" % (VERSION, SCHEMA))
    p.add_argument("what", type=_command, metavar="COMMAND",
                   help="; ".join("%s: %s" % (k, v[2]) for k, v in COMMANDS.items()))
    p.add_argument("-p", "--pid", type=int, help="a live process")
    p.add_argument("paths", nargs="*", metavar="CORE [EXECUTABLE] | CORE CORE...",
                   help="a core file and its executable (default: what the core names); report: several cores, "
                        "one per process of a tree")
    options.add_report_options(p)
    p.add_argument("--snapshot", metavar="FILE", help="report: analyse a snapshot saved by `pyhang snapshot FILE`")
    p.add_argument("--sysroot", metavar="DIR",
                   help="core: the core's files are under DIR (DIR/usr/lib/..., as on the machine it came from)")
    p.add_argument("--lib-search-path", metavar="DIR[:DIR]",
                   help="core: directories holding the core's executable and libraries by file name")
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
    named = [a for a in argv if a in COMMANDS]
    if named and ("-h" in argv or "--help" in argv):
        sys.stdout.write(command_help(named[0]))
        return OK
    p = parser()
    args = p.parse_intermixed_args(argv)
    if args.what == "merge":
        return merge(p, args)
    _targets(p, args)
    report_only = [o for o, v in (("--pretty", args.pretty), ("--native-depth", args.native_depth is not None),
                                  ("--snapshot", args.snapshot), ("--tree", args.tree), ("--locals", args.locals),
                                  ("--merged", args.merged)) if v]
    if args.what != "report" and (report_only or args.json):
        p.error("%s goes with `report` only" % (report_only or ["--json"])[0])
    if args.snapshot:
        if args.pid is not None or args.core or args.cores or args.tree:
            p.error("--snapshot goes without -p, cores or --tree")
        return report_from_snapshot(args.snapshot, args.json)
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
    command = COMMANDS[args.what][0]
    if args.core and not args.executable:
        args.executable = core_executable(args)
    if args.what == "report":
        return report_one(args)
    try:
        out, status = run(command, args)
    except Failure as f:
        return fail(f, args.json)
    sys.stdout.write(out)
    return report_status(status.get("deadlocks"), status.get("incomplete"))


def report_status(deadlocks, incomplete):
    """The exit status of a report made: a deadlock found is the answer even
    where something could not be read; else an incomplete report is never an
    all-clear."""
    return DEADLOCK if deadlocks else INCOMPLETE if incomplete else OK


def merge(p, args):
    """`pyhang merge REPORT.json...`: no gdb; each file that cannot be read is
    one line on stderr; FAILED only when none could."""
    others = [o for o, v in (("-p", args.pid is not None), ("--native-depth", args.native_depth is not None),
                             ("--snapshot", args.snapshot), ("--tree", args.tree), ("--locals", args.locals),
                             ("--merged", args.merged), ("--sysroot", args.sysroot),
                             ("--lib-search-path", args.lib_search_path)) if v]
    if others:
        p.error("%s does not go with `merge`" % others[0])
    if not args.paths:
        p.error("give the report files: pyhang merge REPORT.json...")
    # Plain Python, no gdb and no native module: any Python 3 merges reports.
    from pyhang.analysis.merge import merge_files
    from pyhang.render import merge as render_merge
    m = merge_files(args.paths)
    for source, why in m.problems:
        sys.stderr.write(render_merge.problem_line(source, why) + "\n")
    if not m.members:
        sys.stderr.write("pyhang merge: no process could be read from the %d file%s given\n" % (
            len(args.paths), "" if len(args.paths) == 1 else "s"))
        if args.json:
            print(render_merge.dumps(m, args.pretty))
        return FAILED
    print(render_merge.dumps(m, args.pretty) if args.json else render_merge.render_merge_text(m))
    return OK


def run(command, args, timeout=None, gdbext=GDBEXT):
    """(pyhang's output, how its command ended: pyhang_gdb/status.py's dict, whose
    "deadlocks" and "incomplete" a report sets); raises Failure."""
    try:
        r = subprocess.run(gdb_argv(command, args.pid, args.core, args.executable, gdbext, sysroot=args.sysroot,
                                    lib_search_path=args.lib_search_path),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, env=gdb_env())
    except OSError as exc:
        raise Failure("cannot run gdb: %s" % exc, hint="install gdb (apt-get install gdb)")
    except subprocess.TimeoutExpired:
        raise Failure("gdb did not finish within %d s" % timeout)
    gdb_errors = _gdb_errors(r.stderr)
    status, out = _split_status(r.stdout)
    if status is None or not status.get("ran"):
        # pyhang did not load (its one line says why) or its command never ran
        loading = [l for l in out.splitlines() if l.startswith("pyhang:")]
        raise _not_run(loading[0][len("pyhang: "):] if loading else None, gdb_errors, args)
    if not status.get("ok"):
        raise _failed(status.get("error"), gdb_errors, args)
    return _pyhang_output(out, args.json), status


def _not_run(said, gdb_errors, args):
    """Failure of a gdb in which pyhang did not load (`said`: its one line)
    or its command never ran."""
    return Failure(said or "pyhang did not run in gdb", gdb_errors, _hint(gdb_errors, args))


def _failed(message, gdb_errors, args):
    """Failure of a pyhang command that said why (`message`, its one line)."""
    message = message or "the command failed"
    if gdb_errors and message.startswith("no process or core file is loaded"):
        message = ("gdb cannot attach to process %d" % args.pid if args.pid is not None
                   else "gdb cannot open the core %s" % args.core)
    return Failure(message, gdb_errors, _hint(gdb_errors, args))


def open_gdb(args, timeout=None, gdbext=GDBEXT):
    """A gdb of its own on the process or core `args` names, to answer the
    analysis's questions (pyhang.gdb_pipe.GdbPipe); raises Failure."""
    from pyhang.gdb_pipe import GdbPipe
    try:
        return GdbPipe(gdb_argv(None, args.pid, args.core, args.executable, gdbext, sysroot=args.sysroot,
                                lib_search_path=args.lib_search_path), env=gdb_env(), timeout=timeout)
    except OSError as exc:
        raise Failure("cannot run gdb: %s" % exc, hint="install gdb (apt-get install gdb)")


def examine(pipe, args, native_depth=None, locals=False, timeout=None):
    """(ProcessSnapshot, Report) of the process or core `args` names, whose
    gdb `pipe` answers the questions (open_gdb()); the analysis runs here.
    Closes `pipe`; raises Failure."""
    from pyhang.analysis.report import analyse
    from pyhang.gdb_pipe import AnswerError, GdbEnded
    try:
        failure = unopened(pipe, args, timeout)
        if failure is not None:
            raise failure
        return analyse(pipe, native_depth=native_depth, locals=locals)
    except GdbEnded as exc:
        raise _ended(exc, args, timeout)
    except AnswerError as exc:
        raise Failure(str(exc))
    finally:
        pipe.close()


def unopened(pipe, args, timeout=None):
    """None when `pipe`'s gdb has the target open with pyhang answering;
    else the Failure saying why not (and gdb has ended)."""
    from pyhang.gdb_pipe import AnswerError, GdbEnded
    try:
        pipe.first_answer()
        return None
    except AnswerError as exc:  # pyhang loaded but found no target: gdb says why
        return _failed(str(exc), _gdb_errors(pipe.ended().stderr), args)
    except GdbEnded as exc:
        return _ended(exc, args, timeout)


def _ended(exc, args, timeout):
    """The Failure of a gdb that stopped answering (GdbEnded `exc`)."""
    if exc.message == "gdb did not answer within the time given":
        return Failure("gdb did not finish within %d s" % timeout)
    return _not_run(exc.message, _gdb_errors(exc.stderr), args)


def report_one(args):
    """`pyhang report` of one process or core: analysed and rendered here.
    gdb starts first: it attaches while this process loads the analysis."""
    try:
        pipe = open_gdb(args)
    except Failure as f:
        return fail(f, args.json)
    try:
        from pyhang.analysis import completeness
        from pyhang.render import json as render_json
        from pyhang.render.text import render_text
    except ImportError as exc:  # gdb may know why (pyhang not built): its line first
        failure = unopened(pipe, args)
        pipe.close()
        return fail(failure, args.json) if failure is not None else _no_analysis(exc, args.json)
    try:
        _, report = examine(pipe, args, native_depth=options.native_depth(args.native_depth, args.merged),
                            locals=args.locals)
    except Failure as f:
        return fail(f, args.json)
    if args.json:
        print(render_json.dumps(report, pretty=args.pretty, merged=args.merged))
    else:
        print(render_text(report, merged=args.merged))
    return report_status(report.deadlocks, completeness.incomplete(report))


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


def _gdb_errors(stderr):
    """gdb's own messages, without the warnings every session prints."""
    quiet = ("warning: Unable to find libthread_db", "warning: File \"", "To enable execution", "\tadd-auto-load",
             "line to your configuration", "To completely disable", "\tset auto-load", "For more information",
             "\"Auto-loading safe path\"", "\tinfo \"(gdb)")
    lines = []
    for l in stderr.splitlines():
        l = l.rstrip()
        # "71\t../sysdeps/...: No such file": gdb echoing the source line of the frame it stopped in
        if l and not l.startswith(quiet) and not re.match(r"\d+\t", l) and l not in lines:
            lines.append(l)
    return lines[:8]


def _hint(gdb_errors, args):
    """What to do about the commonest reasons gdb cannot look at a target."""
    text = " ".join(gdb_errors)
    if "Operation not permitted" in text:
        return ("attaching needs ptrace permission: run as the process's user or root, check "
                "/proc/sys/kernel/yama/ptrace_scope (1 lets only a parent attach: use sudo, or set it to 0), "
                "and in a container add --cap-add=SYS_PTRACE")
    if "No such process" in text:
        return "no process %s here: check the pid (in a container, give the pid the host sees)" % args.pid
    if args.core and ("No such file" in text or "not in executable format" in text or "not a core" in text
                      or "Can't open" in text or "Invalid argument" in text):
        return core_problem(args.core) or "%s is not a core file gdb can read" % args.core
    return None


_ELF_TYPES = {1: "an object file", 2: "an executable", 3: "a shared object or PIE executable"}


def core_problem(path):
    """Why `path` cannot be a core file, from the file itself (its ELF
    header and program headers), or None when it looks whole."""
    import struct
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF":
                return "%s is not a core file: it has no ELF header" % path
            e_type, = struct.unpack_from("<H", head, 16)
            if e_type != 4:
                return "%s is %s, not a core file" % (path, _ELF_TYPES.get(e_type, "an ELF file of type %d" % e_type))
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            need = phoff + phentsize * phnum
            if size >= need and phentsize >= 40:
                f.seek(phoff)
                table = f.read(phentsize * phnum)
                for i in range(phnum):
                    _, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
                    need = max(need, p_offset + p_filesz)
    except FileNotFoundError:
        return "there is no file %s" % path
    except OSError as exc:
        return "%s cannot be read: %s" % (path, exc.strerror or exc)
    if size < need:
        return ("%s is a truncated core: %d bytes of the %d its headers describe (cut short while it was "
                "written or copied)" % (path, size, need))
    return None


def _split_status(out):
    """(status dict or None, output without the status line)."""
    marker = "@@PYHANG-STATUS@@ "
    from_line = None
    start = 0 if out.startswith(marker) else out.find("\n" + marker) + 1
    while start > 0 or out.startswith(marker):
        end = out.find("\n", start)
        end = len(out) if end < 0 else end + 1
        try:
            from_line = json.loads(out[start + len(marker):end])
        except ValueError:
            pass
        out = out[:start] + out[end:]  # (megabytes of JSON are copied only where a status line was)
        start = out.find("\n" + marker) + 1
    return from_line, out


def core_executable(args):
    """The executable the core names, where it is on this machine (under
    --sysroot), to give gdb as well: so its own frames have symbols and
    pyhang need not warn that gdb was given none.  None when it is not
    there (a core from another machine: the report says what to give) or
    the core cannot be opened here (gdb says why)."""
    _analysis_path()
    try:
        import _pyhang_native
        path = _pyhang_native.Target.core(args.core, "", args.sysroot or "",
                                          [d for d in (args.lib_search_path or "").split(":") if d]).executable
    except Exception:  # noqa: BLE001 — any failure leaves gdb to open the core alone, as before
        return None
    return path if path and os.path.isfile(path) else None


def _analysis_path():
    """The native module, from the build (or beside an installed pyhang):
    for reading a core's header and for process trees, not for the analysis."""
    build = os.environ.get("PYHANG_BUILD_DIR") or os.path.join(ROOT, "build")
    sys.path.insert(0, os.path.join(build, "python"))


def _no_analysis(exc, as_json):
    return fail(Failure("cannot load the analysis (%s)" % exc, hint="build pyhang first: testdata/setup.sh"), as_json)


def report_tree(args):
    """A process and its descendants (-p PID --tree), or one core per
    process: each examined by its own gdb, then the deadlocks across them."""
    _analysis_path()
    try:
        from pyhang import processes
        from pyhang.analysis import completeness
        from pyhang.render import tree as render_tree
    except ImportError as exc:
        return _no_analysis(exc, args.json)
    if args.pid is not None and not os.path.exists("/proc/%d" % args.pid):
        return fail(Failure("no process %d" % args.pid, hint=_hint(["No such process"], args)), args.json)
    tree = processes.live_tree(args.pid) if args.pid is not None else \
        processes.core_tree(args.cores, sysroot=args.sysroot, lib_search_path=args.lib_search_path)
    print(render_tree.dumps(tree, args.pretty) if args.json else render_tree.render_tree_text(tree))
    reports = [p.report for p in tree.processes if p.report is not None]
    return report_status(tree.deadlocks or any(r.deadlocks for r in reports),
                         any(completeness.incomplete(r) for r in reports))


def report_from_snapshot(path, as_json):
    """The report of a saved snapshot, made here without gdb and without
    the native module (the analysis is plain Python): on any Python 3,
    on any machine the snapshot is copied to."""
    from pyhang.analysis import completeness
    from pyhang.analysis.report import from_snapshot
    from pyhang.render import json as render_json
    from pyhang.render.text import render_text
    try:
        with open(path) as f:
            document = json.load(f)
    except (OSError, ValueError) as exc:
        return fail(Failure("cannot read the snapshot %s: %s" % (path, exc)), as_json)
    try:
        _, report = from_snapshot(document)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return fail(Failure("the snapshot %s is not one pyhang wrote (%s: %s)" % (path, type(exc).__name__, exc)),
                    as_json)
    print(render_json.dumps(report) if as_json else render_text(report))
    return report_status(report.deadlocks, completeness.incomplete(report))


# gdb's lines about the target, wherever they come in its output.
_NOISE = ("[Thread debugging", "Using host libthread_db", "[Inferior ", "[New LWP", "Core was generated",
          "[Current thread is", "Program terminated", "warning: Unable to find libthread_db")


def _pyhang_output(out, json_only):
    """gdb's own chatter (attach messages, the current frame) is dropped."""
    if json_only and _BEGIN + "\n" in out:
        # The document is all pyhang printed after the marker, before gdb's
        # detach message: found without parsing megabytes of JSON.
        doc = out.split(_BEGIN + "\n", 1)[1].rstrip("\n")
        while doc.rsplit("\n", 1)[-1].startswith(_NOISE):
            doc = doc.rsplit("\n", 1)[0] if "\n" in doc else ""
        # (JSON has no raw newline in its strings: a line of gdb's inside is its own line.)
        if doc.startswith("{") and doc.endswith("}") and not any("\n" + n in doc for n in _NOISE):
            return doc + "\n"
    lines = out.splitlines(keepends=True)
    if json_only:
        start = out.find("\n{")
        start = 0 if out.startswith("{") else start + 1 if start >= 0 else -1
        if start >= 0:
            try:
                doc, end = json.JSONDecoder().raw_decode(out, start)
                return out[start:end] + "\n"
            except ValueError:
                pass
    keep, started = [], False
    if _BEGIN + "\n" in out:
        lines, started = out.split(_BEGIN + "\n", 1)[1].splitlines(keepends=True), True
    for l in lines:
        if not started and (l.startswith(("pyhang", "Thread ", "GIL", "warning:", "fork-hazards")) or
                            l.startswith("{")):
            started = True
        if started and not l.startswith(_NOISE):
            keep.append(l)
    return "".join(keep)


if __name__ == "__main__":
    sys.exit(main())

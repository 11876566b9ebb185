"""Running gdb in batch mode on a process or a core with pyhang loaded, as
a user would: its command line and environment; a gdb that answers the
analysis's questions over pipes (open_gdb, examine: the report, analysed in
this process), or a command's printed answer and how it ended, read out of
gdb's output (run: the other commands).  The command line (cli) and the
process-tree runner (processes) both run gdb so; this module needs neither."""
import os
import re
import subprocess

from pyhang import procfs
from pyhang.live_causes import no_process, process_problem  # noqa: F401 (the callers' too)
from pyhang.core_notes import core_problem
from pyhang.model.kinds import CommandFailure

# The checkout or installation: its gdbext/ and python/ (and build/ in a checkout).
from pyhang.checkout import GDBEXT, debug_directories, native_path  # noqa: F401 (native_path: the callers' too)
# Failure raised here, caught by the callers as gdb_batch.Failure; gdb_env sets FAILURE_KINDS_ENV.
from pyhang.failure import FAILURE_KINDS_ENV, FAILURE_PREFIX, Failure  # noqa: F401


def gdb_env():
    """The environment gdb runs in: pyhang inside it names frames from the
    debug files gdb itself is told not to load (gdb_argv)."""
    return dict(os.environ, PYHANG_DEBUG_FILE_DIRECTORY=":".join(debug_directories()), **{FAILURE_KINDS_ENV: "1"})


def gdb_argv(pid=None, core=None, executable=None, gdbext=GDBEXT, sysroot=None, lib_search_path=None):
    """gdb's command line on the target, with pyhang loaded: the caller
    adds the command that answers its questions (pyhang.gdb_pipe)."""
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
    return argv + ["-ex", "source " + gdbext]


def core_executable(core, sysroot=None, lib_search_path=None):
    """The executable core file `core` names, where it is on this machine
    (under `sysroot`), for gdb to be given with the core: so its own frames
    have symbols and pyhang need not warn that gdb was given none.  None when
    it is not there (a core from another machine: the report says what to
    give) or the core cannot be opened here (gdb says why)."""
    native_path()
    try:
        import _pyhang_native
        path = _pyhang_native.Target.core(core, "", sysroot or "",
                                          [d for d in (lib_search_path or "").split(":") if d]).executable
    except Exception:  # noqa: BLE001 — any failure leaves gdb to open the core alone
        return None
    return path if path and os.path.isfile(path) else None


def _executable(args):
    """The executable gdb is given: the one asked for, else a core's own (core_executable)."""
    if args.executable or not args.core:
        return args.executable
    return core_executable(args.core, args.sysroot, args.lib_search_path)


def before_gdb(args):
    """What is known of the target before gdb starts, to tell afterwards
    what happened to it: the process's procfs.stat (None: no such process,
    or a core)."""
    return procfs.stat(args.pid) if args.pid is not None else None


def _not_run(said, gdb_errors, args, before=None):
    """Failure of a gdb in which pyhang did not load (`said`: its one line)
    or its command never ran."""
    cause = target_problem(args, before) if gdb_errors else None
    if cause is not None:
        return Failure(cause, gdb_errors, hint(args, cause))
    # (whether gdb has the target open is not known: what the process itself shows is said)
    return Failure(said or "pyhang did not run in gdb", gdb_errors,
                   hint(args, unopened=args.pid is not None) if gdb_errors else None)


def _failed(message, gdb_errors, args, before=None, kind=None):
    """Failure of a pyhang command that said why (`message`, its one line;
    `kind`, what kind of failure: model.kinds.CommandFailure).  Where gdb
    could not open the target (no target loaded), the cause found in the
    target itself comes first (target_problem), else that gdb could not:
    for a process, why this user may not trace it when /proc says so."""
    message = message or "the command failed"
    if gdb_errors and kind == CommandFailure.NO_TARGET:
        cause = target_problem(args, before)
        if cause is not None:
            return Failure(cause, gdb_errors, hint(args, cause))
        message = ("gdb cannot attach to process %d" % args.pid if args.pid is not None
                   else "gdb cannot open the core %s" % args.core)
        why = _may_not_trace(args.pid)
        if why:
            from pyhang.render.failures import no_permission
            message = no_permission(args.pid, why)
    return Failure(message, gdb_errors, hint(args, unopened=kind == CommandFailure.NO_TARGET))


def _may_not_trace(pid):
    """Why this user may not trace process `pid` (live_causes.permission: /proc's owner of it against
    ours, Yama's ptrace_scope), or None: nothing says so, or another process traces it already."""
    if pid is None:
        return None
    from pyhang import live_causes
    return None if live_causes.tracer(pid) else live_causes.permission(pid)


def refuse_unstoppable(args):
    """Raises Failure when `args` names a live process with a thread gdb's attach would wait for without end
    (live_causes.in_vfork): one line now, not a gdb that never answers."""
    if args.pid is None:
        return
    from pyhang import live_causes
    from pyhang.render import failures
    waiting = live_causes.in_vfork(args.pid)
    if waiting:
        raise Failure(failures.gdb_would_wait(args.pid, waiting), hint=failures.gdb_would_wait_hint(args.pid))


def open_gdb(args, timeout=None, gdbext=GDBEXT):
    """A gdb of its own on the process or core `args` names, to answer the
    analysis's questions (pyhang.gdb_pipe.GdbPipe); raises Failure."""
    from pyhang.gdb_pipe import GdbPipe
    refuse_unstoppable(args)
    before = before_gdb(args)
    try:
        pipe = GdbPipe(gdb_argv(args.pid, args.core, _executable(args), gdbext, sysroot=args.sysroot,
                                lib_search_path=args.lib_search_path), env=gdb_env(), timeout=timeout)
    except OSError as exc:
        raise Failure("cannot run gdb: %s" % exc, hint="install gdb (apt-get install gdb)")
    pipe.before = before
    return pipe


def run_command(args, command, timeout=None, gdbext=GDBEXT):
    """pyhang's lines (without their "pyhang: ") of `command`, run in a gdb of its own on the process
    or core `args` names, for a command that answers in a line (pyhang gcore); raises Failure, with
    the cause found in the target itself where gdb could not open it."""
    refuse_unstoppable(args)
    before = before_gdb(args)
    argv = gdb_argv(args.pid, args.core, _executable(args), gdbext, sysroot=args.sysroot,
                    lib_search_path=args.lib_search_path) + ["-ex", command]
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=gdb_env(), timeout=timeout)
    except OSError as exc:
        raise Failure("cannot run gdb: %s" % exc, hint="install gdb (apt-get install gdb)")
    except subprocess.TimeoutExpired:
        raise Failure("gdb did not finish within %d s" % timeout)
    said = [l[len("pyhang: "):] for l in r.stdout.splitlines() if l.startswith("pyhang: ")]
    failed = [l[len("pyhang: "):] for l in r.stderr.splitlines() if l.startswith("pyhang: ")]
    kinds = [l[len(FAILURE_PREFIX):] for l in r.stderr.splitlines() if l.startswith(FAILURE_PREFIX)]
    if failed:
        raise _failed(failed[-1], _gdb_errors(r.stderr), args, before, kinds[-1] if kinds else None)
    if r.returncode != 0 or not said:
        raise _not_run(None, _gdb_errors(r.stderr), args, before)
    return said


def examine(pipe, args, native_depth=None, locals=False, timeout=None):
    """(ProcessSnapshot, Report) of the process or core `args` names, whose
    gdb `pipe` answers the questions (open_gdb()); the analysis runs here.
    Closes `pipe`; raises Failure."""
    from pyhang.analysis.report import analyse
    return ask(pipe, args, lambda facts: analyse(facts, native_depth=native_depth, locals=locals), timeout)


def ask(pipe, args, question, timeout=None):
    """`question(facts)` of the process or core `args` names, with its gdb
    `pipe` answering what only gdb knows (open_gdb()) and the rest read
    here.  Closes `pipe`; raises Failure."""
    from pyhang.gdb_pipe import AnswerError, GdbEnded, read_here
    try:
        failure = unopened(pipe, args, timeout)
        if failure is not None:
            raise failure
        facts = read_here(pipe, pid=args.pid, core=args.core, executable=args.executable, sysroot=args.sysroot,
                          search_path=[d for d in (args.lib_search_path or "").split(":") if d],
                          debug_directories=debug_directories())
        return question(facts)
    except GdbEnded as exc:
        raise _ended(exc, args, timeout, getattr(pipe, "before", None))
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
        return _failed(str(exc), _gdb_errors(pipe.ended().stderr), args, getattr(pipe, "before", None), exc.kind)
    except GdbEnded as exc:
        return _ended(exc, args, timeout, getattr(pipe, "before", None))


def _ended(exc, args, timeout, before=None):
    """The Failure of a gdb that stopped answering (GdbEnded `exc`)."""
    if exc.timed_out:
        return Failure("gdb did not finish within %d s" % timeout)
    return _not_run(exc.message, _gdb_errors(exc.stderr), args, before)


def _gdb_errors(stderr):
    """gdb's own messages, without the warnings every session prints and
    pyhang's own failure lines (its answer says them)."""
    quiet = ("pyhang: ", FAILURE_PREFIX, "warning: Unable to find libthread_db", "warning: File \"", "To enable execution", "\tadd-auto-load",
             "line to your configuration", "To completely disable", "\tset auto-load", "For more information",
             "\"Auto-loading safe path\"", "\tinfo \"(gdb)")
    lines = []
    for l in stderr.splitlines():
        l = l.rstrip()
        # "71\t../sysdeps/...: No such file": gdb echoing the source line of the frame it stopped in
        if l and not l.startswith(quiet) and not re.match(r"\d+\t", l) and l not in lines:
            lines.append(l)
    return lines[:8]


def hint(args, cause=None, unopened=False):
    """What to do about the commonest reasons gdb cannot look at a target,
    decided on the target itself, not on gdb's words (`cause`: the one
    target_problem found, if any; `unopened`: gdb has not opened the target:
    pyhang in gdb said no target is loaded)."""
    from pyhang import live_causes
    from pyhang.render import failures
    if cause is not None:
        return failures.no_process_hint(args.pid, live_causes.namespaced_as(args.pid)) \
            if args.pid is not None and cause == no_process(args.pid) else None
    if not unopened:
        return None
    if args.pid is not None:
        if _may_not_trace(args.pid):
            return failures.PTRACE_HINT
        if procfs.stat(args.pid) is None:
            return failures.no_process_hint(args.pid, live_causes.namespaced_as(args.pid))
        return None
    if args.core:
        return "%s is not a core file gdb can read" % args.core
    return None


def target_problem(args, before=None):
    """Why gdb could not look at the target, as the target itself shows:
    a core that is missing, truncated or no core (core_problem), a process
    that is not there or has exited (process_problem; `before`: before_gdb());
    None when pyhang sees nothing wrong with it."""
    if args.core:
        return core_problem(args.core)
    if args.pid is not None:
        return process_problem(args.pid, before)
    return None





"""Running gdb in batch mode on a process or a core with pyhang loaded, as
a user would: its command line and environment; a gdb that answers the
analysis's questions over pipes (open_gdb, examine: the report, analysed in
this process), or a command's printed answer and how it ended, read out of
gdb's output (run: the other commands).  The command line (cli) and the
process-tree runner (processes) both run gdb so; this module needs neither."""
import json
import os
import re
import struct

# The checkout or installation: its gdbext/ and python/ (and build/ in a checkout).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GDBEXT = os.path.join(ROOT, "gdbext", "pyhang.gdb")


class Failure(Exception):
    """Why pyhang could not look at the target: the message, gdb's own lines, what to do."""

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


def run(command, args, timeout=None, gdbext=GDBEXT):
    """(pyhang's output, how its command ended: pyhang_gdb/status.py's dict, whose
    "deadlocks" and "incomplete" a report sets); raises Failure."""
    import subprocess  # here: a command line that reads the process itself (--no-stop) runs no gdb
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
    return Failure(said or "pyhang did not run in gdb", gdb_errors, hint(gdb_errors, args))


def _failed(message, gdb_errors, args):
    """Failure of a pyhang command that said why (`message`, its one line)."""
    message = message or "the command failed"
    if gdb_errors and message.startswith("no process or core file is loaded"):
        message = ("gdb cannot attach to process %d" % args.pid if args.pid is not None
                   else "gdb cannot open the core %s" % args.core)
    return Failure(message, gdb_errors, hint(gdb_errors, args))


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
    from pyhang.gdb_pipe import AnswerError, GdbEnded, read_here
    try:
        failure = unopened(pipe, args, timeout)
        if failure is not None:
            raise failure
        facts = read_here(pipe, pid=args.pid, core=args.core, executable=args.executable, sysroot=args.sysroot,
                          search_path=[d for d in (args.lib_search_path or "").split(":") if d],
                          debug_directories=[d for d in gdb_env()["PYHANG_DEBUG_FILE_DIRECTORY"].split(":") if d])
        return analyse(facts, native_depth=native_depth, locals=locals)
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


def hint(gdb_errors, args):
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

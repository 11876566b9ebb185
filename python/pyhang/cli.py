"""The `pyhang` command line: runs gdb in batch mode on a process or a core
with pyhang loaded, exactly as a user would, and prints the result.

  pyhang report [--json] -p PID
  pyhang report [--json] CORE [EXECUTABLE]
  pyhang py-bt | gil-holder | lock-owner  (-p PID | CORE [EXECUTABLE])
  pyhang report [--json] --snapshot FILE    (a snapshot saved in gdb by `pyhang snapshot FILE`;
                                            no gdb and no target needed)
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GDBEXT = os.path.join(ROOT, "gdbext", "pyhang.gdb")

COMMANDS = {
    "report": "pyhang report",
    "py-bt": "thread apply all pyhang-py-bt",
    "gil-holder": "gil-holder",
    "lock-owner": "thread apply all lock-owner",
}


def gdb_argv(command, pid=None, core=None, executable=None, gdbext=GDBEXT):
    argv = ["gdb", "-nx", "-batch", "-iex", "set pagination off"]
    if executable:
        argv.append(executable)
    if pid is not None:
        argv += ["-p", str(pid)]
    if core:
        argv += ["-c", core]
    return argv + ["-ex", "source " + gdbext, "-ex", command]


def main(argv=None):
    p = argparse.ArgumentParser(prog="pyhang", description="Why is this Python program stuck?")
    p.add_argument("what", choices=sorted(COMMANDS), help="what to print")
    p.add_argument("-p", "--pid", type=int, help="a live process")
    p.add_argument("core", nargs="?", help="a core file")
    p.add_argument("executable", nargs="?", help="the core's executable (default: what the core names)")
    p.add_argument("--json", action="store_true", help="report: the pyhang-report/1 JSON document")
    p.add_argument("--snapshot", metavar="FILE", help="report: analyse a snapshot saved by `pyhang snapshot FILE`")
    args = p.parse_intermixed_args(argv)
    if args.snapshot:
        if args.what != "report" or args.pid is not None or args.core:
            p.error("--snapshot goes with `report` alone, without -p or a core")
        return report_from_snapshot(args.snapshot, args.json)
    if (args.pid is None) == (args.core is None):
        p.error("give either -p PID or a core file")
    command = COMMANDS[args.what] + (" --json" if args.json and args.what == "report" else "")
    r = subprocess.run(gdb_argv(command, args.pid, args.core, args.executable),
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    sys.stdout.write(_pyhang_output(r.stdout, args.json))
    return r.returncode


def report_from_snapshot(path, as_json):
    """The report of a saved snapshot, made here without gdb."""
    build = os.environ.get("PYHANG_BUILD_DIR") or os.path.join(ROOT, "build")
    sys.path.insert(0, os.path.join(build, "python"))
    try:
        from pyhang import analysis
        from pyhang.model import snapshot
        from pyhang.render import json as render_json
        from pyhang.render.text import render_text
    except ImportError as exc:
        sys.stderr.write("pyhang: cannot load the analysis (%s); build pyhang first (testdata/setup.sh)\n" % exc)
        return 1
    try:
        with open(path) as f:
            snap = snapshot.from_dict(json.load(f))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        sys.stderr.write("pyhang: cannot read the snapshot %s: %s\n" % (path, exc))
        return 1
    try:
        report = analysis.build_report(snap)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        sys.stderr.write("pyhang: the snapshot %s is not one pyhang wrote (%s: %s)\n" % (
            path, type(exc).__name__, exc))
        return 1
    print(render_json.dumps(report) if as_json else render_text(report))
    return 0


def _pyhang_output(out, json_only):
    """gdb's own chatter (attach messages, the current frame) is dropped."""
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
    noise = ("[Thread debugging", "Using host libthread_db", "[Inferior ", "[New LWP", "Core was generated",
             "[Current thread is", "Program terminated", "warning: Unable to find libthread_db")
    keep, started = [], False
    for l in lines:
        if not started and (l.startswith(("pyhang", "Thread ", "GIL", "warning:")) or l.startswith("{")):
            started = True
        if started and not l.startswith(noise):
            keep.append(l)
    return "".join(keep)


if __name__ == "__main__":
    sys.exit(main())

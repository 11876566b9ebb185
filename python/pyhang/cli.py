"""The `pyhang` command line: runs gdb in batch mode on a process or a core
with pyhang loaded, exactly as a user would, and prints the result.

  pyhang report [--json] -p PID
  pyhang report [--json] CORE [EXECUTABLE]
  pyhang py-bt | gil-holder | lock-owner  (-p PID | CORE [EXECUTABLE])
"""
import argparse
import json
import os
import subprocess
import sys

GDBEXT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "gdbext", "pyhang.gdb")

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
    args = p.parse_intermixed_args(argv)
    if (args.pid is None) == (args.core is None):
        p.error("give either -p PID or a core file")
    command = COMMANDS[args.what] + (" --json" if args.json and args.what == "report" else "")
    r = subprocess.run(gdb_argv(command, args.pid, args.core, args.executable),
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    sys.stdout.write(_pyhang_output(r.stdout, args.json))
    return r.returncode


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

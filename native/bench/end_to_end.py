#!/usr/bin/env python3
"""End-to-end benchmark: pyhang against gdb's own commands on the same
process, side by side, interleaved, median of N rounds, live and on a core.

  native/bench/end_to_end.py [--threads T] [--depth D] [--python PATH] [--rounds N] [--core-only|--live-only]
                             [--compare CHECKOUT]

Prints a table of medians and the ratios the performance goals are stated in.
Uses the build in $PYHANG_BUILD_DIR or ./build.  --compare times another
checkout's `pyhang report --json` (its gdbext/ and build/) in the same
interleaved rounds: before and after a change, on the same load.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402


def libpython_gdb(python):
    """libpython.py (CPython's gdb helpers) of an interpreter, when it ships one."""
    real = os.path.realpath(python)
    candidate = real + "-gdb.py"
    return candidate if os.path.exists(candidate) else None


def commands(python, compare=None):
    cmds = {
        "attach only (info threads)": (["info threads"], False),
        "gdb: thread apply all bt": (["thread apply all bt"], False),
        "pyhang report --json": (["pyhang report --json"], True),
        "thread apply all lock-owner": (["thread apply all lock-owner"], True),
        "thread apply all pyhang-py-bt": (["thread apply all pyhang-py-bt"], True),
    }
    if compare:
        cmds["pyhang report --json (%s)" % compare] = (["pyhang report --json"], compare)
    lp = libpython_gdb(python)
    if lp:
        cmds["libpython.py: thread apply all py-bt"] = (["source " + lp, "thread apply all py-bt"], False)
    return cmds


def run_once(cmd, load, target):
    argv = ["gdb", "-nx", "-batch", "-iex", "set pagination off"]
    if target.get("executable"):
        argv.append(target["executable"])
    if target.get("pid"):
        argv += ["-p", str(target["pid"])]
    if target.get("core"):
        argv += ["-c", target["core"]]
    if load:
        # `load` is True for this checkout, or the root of another one (--compare).
        gdbext = harness.GDBEXT if load is True else os.path.join(load, "gdbext", "pyhang.gdb")
        argv += ["-ex", "source " + gdbext]
    for c in cmd:
        argv += ["-ex", c]
    start = time.perf_counter()
    env = None if load in (True, False) else dict(os.environ, PYHANG_BUILD_DIR=os.path.join(load, "build"))
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
    return time.perf_counter() - start


def check_pyhang_loads(pid):
    """A benchmark of a pyhang that fails to load would time an error message."""
    if live_reads(pid) is None:
        sys.exit("pyhang did not run in gdb (is the module built for gdb's Python?)")


def measure(target, cmds, rounds):
    times = {name: [] for name in cmds}
    for _ in range(rounds):
        for name, (cmd, load) in cmds.items():  # interleaved: one of each per round
            times[name].append(run_once(cmd, load, target))
    return {name: statistics.median(v) for name, v in times.items()}


READS = (
    "python import _pyhang_native as n, gdb; t = n.Target.live(gdb.selected_inferior().pid); "
    "s = n.python_state(t); st = t.stats(); f = sum(len(x.frames) for x in s.threads); "
    "print('READS', f, st['syscalls'], st['bytes'])")


def live_reads(pid):
    """Python frames decoded, read system calls and bytes read, for one full
    decode of every thread's Python stack of the live process."""
    out = subprocess.run(["gdb", "-nx", "-batch", "-p", str(pid), "-ex", "source " + harness.GDBEXT, "-ex", READS],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    for line in out.splitlines():
        if line.startswith("READS"):
            frames, calls, size = map(int, line.split()[1:])
            return frames, calls, size
    return None


def table(title, med):
    bt = med["gdb: thread apply all bt"]
    print("\n%s" % title)
    print("| what | median s | ÷ gdb bt |")
    print("|---|---|---|")
    for name, t in med.items():
        print("| %s | %.3f | %.2f |" % (name, t, t / bt))


def grid(python, rounds):
    """Goal 5: time per frame stays flat as threads and depth grow."""
    print("\nscaling (live, %s, median of %d): pyhang report --json" % (python, rounds))
    print("| threads | depth | Python frames | attach s | pyhang s | gdb bt s | pyhang − attach, µs per Python frame |")
    print("|---|---|---|---|---|---|---|")
    cmds = {"attach": (["info threads"], False), "pyhang": (["pyhang report --json"], True),
            "bt": (["thread apply all bt"], False)}
    for t in (16, 64, 256, 1024):
        for d in (10, 50):
            scenario = [python, "-u", os.path.join(harness.SCENARIOS, "many_threads.py"), str(t), str(d)]
            with harness.Scenario(scenario, ready_timeout=600) as s:
                med = measure({"pid": s.pid}, cmds, rounds)
                reads = live_reads(s.pid)
                if reads is None:
                    sys.exit("pyhang did not run in gdb (is the module built?)")
                frames = reads[0]
            print("| %d | %d | %d | %.3f | %.3f | %.3f | %.1f |" % (
                t, d, frames, med["attach"], med["pyhang"], med["bt"],
                1e6 * (med["pyhang"] - med["attach"]) / max(frames, 1)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=256)
    p.add_argument("--depth", type=int, default=50)
    p.add_argument("--python", default=os.path.expanduser("~/.pyenv/versions/3.11.7/bin/python3"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--live-only", action="store_true")
    p.add_argument("--core-only", action="store_true")
    p.add_argument("--keep-core", metavar="PATH", help="keep the workload's core there (for pyhang_bench)")
    p.add_argument("--grid", action="store_true", help="the scaling table over threads x depth instead")
    p.add_argument("--compare", metavar="CHECKOUT", help="also time this other checkout's pyhang (built in its build/)")
    args = p.parse_args()
    if args.grid:
        grid(args.python, args.rounds)
        return
    cmds = commands(args.python, args.compare)
    scenario = [args.python, "-u", os.path.join(harness.SCENARIOS, "many_threads.py"), str(args.threads),
                str(args.depth)]
    with harness.Scenario(scenario, ready_timeout=300) as s:
        print("workload: %s, %d threads + main, %d Python frames deep, %d rounds, %s" % (
            args.python, args.threads, args.depth, args.rounds, time.strftime("%Y-%m-%d")))
        check_pyhang_loads(s.pid)
        if not args.core_only:
            table("live process", measure({"pid": s.pid}, cmds, args.rounds))
            reads = live_reads(s.pid)
            if reads:
                frames, calls, size = reads
                print("\nlive reads: %d Python frames, %d read system calls (%.1f frames per call), %d KiB" % (
                    frames, calls, frames / max(calls, 1), size // 1024))
        if not args.live_only:
            core = s.gcore()
            if args.keep_core:
                import shutil
                shutil.copy(core, args.keep_core)
            table("core file", measure({"executable": args.python, "core": core}, cmds, args.rounds))


if __name__ == "__main__":
    main()

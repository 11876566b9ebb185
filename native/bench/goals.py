#!/usr/bin/env python3
"""The performance goals, measured in one run: prints the performance
tables of docs/performance.md (markdown), with the machine they were
measured on.

  native/bench/goals.py [--python /usr/bin/python3.11] [--rounds 3] [--threads 64,256,1024] [--depth 50]
                        [--pool 32x8] [--gib 0.25,3] [--peer-python P] [--skip threads,cli,peer,tree,cores]

--python may be a launcher of testdata/containers.py (today's interpreters in
their Debian roots: python3 testdata/containers.py lists them); cores of its
processes are then opened with the root as the sysroot.

Every comparison is interleaved (one run of each command per round, on the
same target, under the same load) and reported as the median over rounds;
ratios are the median of each round's own ratio, so a burst of load from
other work on the machine hits both sides of a ratio alike.

  threads  `pyhang report --json` against gdb's `thread apply all bt` on a
           process of T threads + main, each D Python frames deep (live
           and from a gcore core), and what pyhang adds per thread over
           attaching (gdb's `info threads`) at the largest T against the
           smallest
  cli      the `pyhang` command line against typing its gdb command (gdb -batch -p PID
           -ex 'source gdbext/pyhang.gdb' -ex 'pyhang report --json')
  nostop   `pyhang report --json --no-stop -p PID` (no gdb, the process never stopped)
           against gdb's `thread apply all bt`, live: the goal is at most 0.25×, linear in
           threads; `--skip threads,cli,tree,cores` measures it alone
  peer     `pyhang report --json --no-stop --once -p PID` against a C stack dumper, Debian's
           austin (`austin --where PID`, installed in the trixie root that testdata/containers.py
           makes; run by that root's loader, as if installed on this machine), and the stopping
           report against gdb's `bt`, on trixie's python3.13 (the default --peer-python): wall
           time and peak resident memory of each command (GNU time's %M: apt-get install time);
           the goal is at most 2× austin, under 40 MiB; and the second look's cost: what
           `pyhang report --no-stop -p PID` (one look and the second look) takes of the CPU
           beyond `--once`; and the watchdog's: the CPU `pyhang watch --interval 0.1` takes of
           one core
  tree     `pyhang report --tree` on a Pool of P processes with T threads
           each, against the sum of gdb's `bt` over the same processes
  cores    gdb's resident memory with a core loaded, before and after
           `pyhang report --json`, and the report's time, on cores of a
           process holding G GiB (the threads and stacks alike)
Uses the build in $PYHANG_BUILD_DIR or ./build.  Every command runs as for a user: Python caches the
bytecode it compiles (under $TMPDIR/pyhang-bench-pycache), whatever PYTHONDONTWRITEBYTECODE says.
"""
import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import containers  # noqa: E402
import harness  # noqa: E402
from pyhang import procfs  # noqa: E402

PYHANG = os.path.join(ROOT, "python", "bin", "pyhang")
POOL = os.path.join(ROOT, "native", "bench", "pool_threads.py")
RSS = "python print('RSS', [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmRSS')][0])"


def machine():
    """One line: the machine, its load, gdb and the interpreter measured."""
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        pass
    with open("/proc/meminfo") as f:
        mem = int(next(l.split()[1] for l in f if l.startswith("MemTotal"))) / (1 << 20)
    gdb = subprocess.run(["gdb", "--version"], stdout=subprocess.PIPE, text=True).stdout.splitlines()[0]
    return "%s; %d cores (%s), %.0f GiB, Linux %s; %s" % (
        time.strftime("%Y-%m-%d"), os.cpu_count(), cpu, mem, platform.release(), gdb)


def load():
    return "load average %.1f" % os.getloadavg()[0]


# Every command runs as it does for a user: Python may cache the bytecode it
# compiles (here under a directory of the benchmark's own, not the checkout),
# whatever PYTHONDONTWRITEBYTECODE the shell that runs the benchmark sets.
PYCACHE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "pyhang-bench-pycache")


def as_a_user(env=None):
    env = dict(env if env is not None else os.environ, PYTHONPYCACHEPREFIX=PYCACHE)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(argv, env=None):
    env = as_a_user(env)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
    return time.perf_counter() - start


def core_files(executable):
    """(executable, sysroot or None) to open a core of `executable` with: a
    container's interpreter (testdata/containers.py) is read from its root."""
    inside = containers.inside(executable)
    return (inside[0] + inside[1], inside[0]) if inside else (executable, None)


def gdb(target, commands, pyhang=False):
    """gdb -batch on `target` ({"pid"} or {"executable", "core"}) running `commands`."""
    argv = ["gdb", "-nx", "-batch", "-iex", "set pagination off"]
    if target.get("executable"):
        executable, sysroot = core_files(target["executable"])
        if sysroot:
            argv += ["-iex", "set sysroot " + sysroot]
        argv.append(executable)
    argv += ["-p", str(target["pid"])] if target.get("pid") else ["-c", target["core"]]
    if pyhang:
        argv += ["-ex", "source " + harness.GDBEXT]
    for c in commands:
        argv += ["-ex", c]
    return argv


def interleaved(cases, rounds):
    """{name: [seconds per round]}: one run of every case per round."""
    times = {name: [] for name in cases}
    for _ in range(rounds):
        for name, run in cases.items():
            times[name].append(run())
    return times


def med(times, name):
    return statistics.median(times[name])


def ratio(times, a, b):
    """The median over rounds of a's time ÷ b's time in that round."""
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


def check_loads(target):
    out = subprocess.run(gdb(target, ["pyhang report --json"], pyhang=True), stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    if '"schema": "pyhang-report/1"' not in out and '"schema":"pyhang-report/1"' not in out:
        sys.exit("pyhang did not run in gdb (is the module built for gdb's Python?)")


# `pyhang report --json --no-stop --once` against austin --where: at most this, and its peak memory at most this.
PEER_GOAL, PEER_MEMORY_GOAL_MIB = 2.0, 40
# The watchdog: ten looks a second for ten seconds, at most a tenth of one core.
WATCH_INTERVAL, WATCH_SECONDS, WATCH_GOAL_PERCENT = 0.1, 10, 10


def peak(argv, env=None):
    """(wall seconds, peak resident MiB or None, CPU seconds) of `argv` run under GNU time (which forks it from a
    small process: a child forked from this Python would start with this Python's resident memory as its peak)."""
    env = as_a_user(env)
    gnu_time = "/usr/bin/time"
    start = time.perf_counter()
    if not os.path.exists(gnu_time):
        _, _, usage = os.wait4(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                env=env).pid, 0)
        return time.perf_counter() - start, None, usage.ru_utime + usage.ru_stime
    r = subprocess.run([gnu_time, "-f", "pyhang-peak %M %U %S"] + argv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - start
    line = [l.split() for l in r.stderr.splitlines() if l.startswith("pyhang-peak ")][-1]
    return wall, int(line[1]) / 1024, float(line[2]) + float(line[3])


def austin_argv(python):
    """argv of `austin --where` for processes of `python` (a launcher of testdata/containers.py whose root has
    austin: run by the root's own loader and libraries, in this machine's namespaces; else an austin on PATH),
    or None."""
    inside = containers.inside(python)
    if inside:
        root = inside[0]
        loader = os.path.join(root, "lib64", "ld-linux-x86-64.so.2")
        if os.path.exists(os.path.join(root, "usr", "bin", "austin")) and os.path.exists(loader):
            libs = ":".join(os.path.join(root, d) for d in ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu"))
            return [loader, "--library-path", libs, os.path.join(root, "usr", "bin", "austin"), "--where"]
        return None
    found = shutil.which("austin")
    return [found, "--where"] if found else None


def peer_python():
    """The trixie root's python3.13 launcher (its root has austin), or None."""
    return next((launcher for test_id, launcher, _ in containers.interpreters() if test_id == "debian-trixie-3.13"),
                None)


def peer_section(args):
    python = args.peer_python or peer_python()
    austin = austin_argv(python) if python else None
    if austin is None:
        print("\nNo austin to measure against (python3 testdata/containers.py makes the trixie root, with "
              "austin): the peer table is left out.")
        return
    env = dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir())
    rows, second, watched = [], [], []
    for t in args.threads:
        scenario = [python, "-u", os.path.join(harness.SCENARIOS, "many_threads.py"), str(t), str(args.depth)]
        with harness.Scenario(scenario, ready_timeout=600) as s:
            pid = str(s.pid)
            cases = {"austin": austin + [pid],
                     "nostop": [PYHANG, "report", "--json", "--no-stop", "--once", "-p", pid],
                     "looks": [PYHANG, "report", "--json", "--no-stop", "-p", pid],
                     "bt": gdb({"pid": s.pid}, ["thread apply all bt"]),
                     "report": [PYHANG, "report", "--json", "-p", pid, "--once"]}
            before = load()
            runs = {name: [] for name in cases}
            for _ in range(args.rounds):
                for name, argv in cases.items():
                    runs[name].append(peak(argv, env=None if name in ("austin", "bt") else env))
        wall = {name: [r[0] for r in v] for name, v in runs.items()}
        mem = {name: max((r[1] for r in v if r[1] is not None), default=None) for name, v in runs.items()}
        cpu = {name: statistics.median(r[2] for r in v) for name, v in runs.items()}
        mib = lambda name: "?" if mem[name] is None else "%.1f MiB" % mem[name]  # noqa: E731
        rows.append((t, "| %d | %.3f s, %s | %.3f s, %s | **%.1f×** | %.3f s | %.3f s, %s | **%.2f×** | %s |" % (
            t, med(wall, "austin"), mib("austin"), med(wall, "nostop"), mib("nostop"), ratio(wall, "nostop", "austin"),
            med(wall, "bt"), med(wall, "report"), mib("report"), ratio(wall, "report", "bt"), before),
            ratio(wall, "nostop", "austin"), mem["nostop"]))
        second.append("| %d | %.3f s | %.3f s | %.3f s |" % (t, cpu["nostop"], cpu["looks"], cpu["looks"] - cpu["nostop"]))
        with harness.Scenario(scenario, ready_timeout=600) as s:
            wall, _, used = peak([PYHANG, "watch", "--interval", str(WATCH_INTERVAL), "--after", "3600",
                                  "--for", str(WATCH_SECONDS), "-p", str(s.pid)], env=env)
        watched.append("| %d | %.1f s | %.2f s | **%.1f%%** |" % (t, wall, used, 100 * used / wall))
        print("  measured %d threads against austin" % t, file=sys.stderr)
    print("\nThe one-look no-stop report against a C stack dumper, %s, %d Python frames a thread (wall time, "
          "median of %d interleaved rounds; peak resident memory, the largest): `austin --where PID` (%s); "
          "`pyhang report --json --no-stop --once -p PID`; gdb's `thread apply all bt`; `pyhang report --json "
          "--once -p PID` (stops the process; goals: at most %.0f× austin, under %d MiB; at most 1× `bt`):\n"
          % (python, args.depth, args.rounds, " ".join(austin[3:4]) if len(austin) > 2 else austin[0],
             PEER_GOAL, PEER_MEMORY_GOAL_MIB))
    print("| threads | austin | `--no-stop --once` | ÷ austin | gdb `bt` | `report --once` (stops) | ÷ `bt` | load before |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(r for _, r, _, _ in rows))
    print("\nThe second look's cost, CPU time (user + system, median) of `pyhang report --json --no-stop`: one look, "
          "then the second look's two, %.1f s apart (the default --interval):\n" % 0.5)
    print("| threads | `--once` | with the second look | the second look |")
    print("|---|---|---|---|")
    print("\n".join(second))
    print("\nThe watchdog's cost: CPU time (user + system) of `pyhang watch --interval %s --after 3600 --for %d -p "
          "PID` (a look every %s s, no report: the process never stands still an hour), of one core (goal: at "
          "most %d%% at 256 threads):\n" % (WATCH_INTERVAL, WATCH_SECONDS, WATCH_INTERVAL, WATCH_GOAL_PERCENT))
    print("| threads | watched | CPU | of one core |")
    print("|---|---|---|---|")
    print("\n".join(watched))


def thread_cases(target, with_cli, with_nostop=False, with_report=True):
    cases = {"bt": lambda: timed(gdb(target, ["thread apply all bt"]))}
    if with_report:
        cases["attach"] = lambda: timed(gdb(target, ["info threads"]))
        cases["report"] = lambda: timed(gdb(target, ["pyhang report --json"], pyhang=True))
    if with_cli:
        env = dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir())
        executable, sysroot = core_files(target.get("executable"))
        argv = [PYHANG, "report", "--json"] + (["-p", str(target["pid"]), "--once"] if target.get("pid") else
                                               [target["core"], executable] + (["--sysroot", sysroot] if sysroot else []))
        cases["cli"] = lambda: timed(argv, env=env)
    if with_nostop and target.get("pid"):
        env = dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir())
        cases["nostop"] = lambda: timed([PYHANG, "report", "--json", "--no-stop", "-p", str(target["pid"])], env=env)
    return cases


# `pyhang report --json --no-stop` against gdb's `thread apply all bt`, live: at most this.
NOSTOP_GOAL = 0.25


def threads_section(args, skip):
    """The threads, cli and nostop tables; with "threads" skipped and
    "nostop" not, the nostop table alone (gdb's `bt` and --no-stop, live)."""
    rows, per_thread, cli_rows, nostop_rows, nostop = [], {}, [], [], {}
    only_nostop = "threads" in skip
    for t in args.threads:
        scenario = [args.python, "-u", os.path.join(harness.SCENARIOS, "many_threads.py"), str(t), str(args.depth)]
        with harness.Scenario(scenario, ready_timeout=600) as s:
            targets = [("live", {"pid": s.pid})]
            if not only_nostop:
                check_loads(targets[0][1])
                targets.append(("core", {"executable": args.python, "core": s.gcore()}))
            for kind, target in targets:
                before = load()
                times = interleaved(thread_cases(target, "cli" not in skip and not only_nostop, "nostop" not in skip,
                                                 with_report=not only_nostop), args.rounds)
                if "nostop" in times:
                    nostop[t] = (med(times, "nostop"), ratio(times, "nostop", "bt"))
                    nostop_rows.append("| %d | %.2f s | %.2f s | **%.2f×** | %s |" % (
                        t, med(times, "bt"), med(times, "nostop"), nostop[t][1], before))
                if only_nostop:
                    print("  measured %d threads, %s" % (t, kind), file=sys.stderr)
                    continue
                extra = (med(times, "report") - med(times, "attach")) / (t + 1)
                per_thread[(kind, t)] = extra
                rows.append("| %d | %s | %.2f s | %.2f s | %.2f s | **%.2f×** | %.2f ms | %s |" % (
                    t, kind, med(times, "attach"), med(times, "bt"), med(times, "report"),
                    ratio(times, "report", "bt"), 1e3 * extra, before))
                if "cli" in times:
                    cli_rows.append("| %d | %s | %.2f s | %.2f s | **%.2f×** |" % (
                        t, kind, med(times, "report"), med(times, "cli"), ratio(times, "cli", "report")))
                print("  measured %d threads, %s" % (t, kind), file=sys.stderr)
    if not only_nostop:
        print_threads_tables(args, rows, per_thread, cli_rows)
    if nostop_rows:
        print_nostop_table(args, nostop_rows, nostop)


def print_threads_tables(args, rows, per_thread, cli_rows):
    print("\n`pyhang report --json` against gdb's `thread apply all bt`, %s, %d Python frames a thread "
          "(median of %d interleaved rounds):\n" % (args.python, args.depth, args.rounds))
    print("| threads | target | attach alone (`info threads`) | gdb `thread apply all bt` | `pyhang report --json` "
          "| ÷ `bt` | pyhang − attach, per thread | load before |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    lo, hi = min(args.threads), max(args.threads)
    if lo != hi:
        print("\nWhat pyhang adds per thread over attaching, at %d threads ÷ at %d: %s." % (hi, lo, ", ".join(
            "%s %.2f×" % (kind, per_thread[(kind, hi)] / per_thread[(kind, lo)])
            for kind in ("live", "core") if per_thread.get((kind, lo), 0) > 0)))
    if cli_rows:
        print("\nThe `pyhang report --json` command line against typing its gdb command, `gdb -batch -p PID -ex "
              "'source gdbext/pyhang.gdb' -ex 'pyhang report --json'` (the same target; the command line tells gdb "
              "to load no separate debug file and no auto-loaded script, which pyhang does not use):\n")
        print("| threads | target | gdb command | `pyhang report --json` | ÷ gdb |")
        print("|---|---|---|---|---|")
        print("\n".join(cli_rows))


def print_nostop_table(args, rows, nostop):
    """`nostop`: {threads: (median seconds, median ratio to `bt`)}."""
    print("\n`pyhang report --json --no-stop -p PID` (no gdb; the process is never stopped) against gdb's "
          "`thread apply all bt` on the same live process, %d Python frames a thread (median of %d interleaved "
          "rounds; goal: at most %.2f×):\n" % (args.depth, args.rounds, NOSTOP_GOAL))
    print("| threads | gdb `thread apply all bt` | `pyhang report --no-stop` | ÷ `bt` | load before |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    ratios = [nostop[t][1] for t in sorted(nostop)]
    print("\n`--no-stop` is %s of gdb's `bt`: %s its goal of at most %.2f×." % (
        " and ".join("%.2f×" % r for r in ratios), "within" if max(ratios) <= NOSTOP_GOAL else "short of",
        NOSTOP_GOAL))
    lo, hi = min(nostop), max(nostop)
    if lo != hi:
        print("Its time per thread at %d threads ÷ at %d: %.2f× (at most 1×: linear in threads, or better)." % (
            hi, lo, (nostop[hi][0] / hi) / (nostop[lo][0] / lo)))


def tree_section(args):
    processes, per = args.pool
    with harness.Scenario([args.python, "-u", POOL, str(processes), str(per)], ready_timeout=600) as s:
        pids = [s.pid] + [p for p, _ in procfs.descendants(s.pid, 4 * processes)[0]]
        env = dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir())
        cases = {
            "bt": lambda: sum(timed(gdb({"pid": p}, ["thread apply all bt"])) for p in pids),
            "tree": lambda: timed([PYHANG, "report", "--tree", "--json", "-p", str(s.pid)], env=env),
        }
        before = load()
        times = interleaved(cases, args.rounds)
    print("\n`pyhang report --tree --json` on a Pool of %d processes with %d threads each (%d processes with the "
          "parent), against gdb's `thread apply all bt` on each process in turn (median of %d interleaved rounds, "
          "%s):\n" % (processes, per, len(pids), args.rounds, before))
    print("| sum of gdb `bt` | `pyhang report --tree --json` | ÷ sum of `bt` |")
    print("|---|---|---|")
    print("| %.2f s | %.2f s | **%.2f×** |" % (med(times, "bt"), med(times, "tree"), ratio(times, "tree", "bt")))


def rss_and_time(python, core, rounds):
    """(gdb's VmRSS in KiB with the core loaded, after source, after the report), report and bt times."""
    out = subprocess.run(gdb({"executable": python, "core": core}, [RSS, "source " + harness.GDBEXT, RSS,
                                                                    "pipe pyhang report --json | wc -c", RSS]),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    rss = [int(l.split()[1]) for l in out.splitlines() if l.startswith("RSS")]
    target = {"executable": python, "core": core}
    times = interleaved({"bt": lambda: timed(gdb(target, ["thread apply all bt"])),
                         "report": lambda: timed(gdb(target, ["pyhang report --json"], pyhang=True))}, rounds)
    return rss, times


def cores_section(args):
    rows = []
    script = os.path.join(harness.SCENARIOS, "parked_threads.py")
    for gib in args.gib:
        hog = ("blob = b'\\x01' * int(%f * (1 << 30)); p = %r; "
               "exec(compile(open(p).read(), p, 'exec'), {'__file__': p, '__name__': '__main__', 'blob': blob})"
               % (gib, script))
        with harness.Scenario([args.python, "-u", "-c", hog, "4", "10"], ready_timeout=600) as s:
            core = s.gcore()
            size = os.path.getsize(core)
            before = load()
            rss, times = rss_and_time(args.python, core, args.rounds)
            os.unlink(core)
        if len(rss) != 3:
            sys.exit("gdb did not print its memory use on the %.2f GiB core" % gib)
        rows.append("| %.2f GiB | %d MiB | %+d MiB | %+d MiB | %.2f s | %.2f s | %s |" % (
            size / (1 << 30), rss[0] // 1024, (rss[1] - rss[0]) // 1024, (rss[2] - rss[0]) // 1024,
            med(times, "bt"), med(times, "report"), before))
    print("\nCores of a process holding a large buffer, 4 threads + main (median of %d interleaved rounds):\n"
          % args.rounds)
    print("| core | gdb's RSS with the core loaded | after `source pyhang.gdb` | after `pyhang report --json` "
          "| gdb `thread apply all bt` | `pyhang report --json` | load before |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


def numbers(text, kind=int):
    return [kind(x) for x in text.split(",") if x]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--python", default="/usr/bin/python3.11")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=numbers, default=[64, 256, 1024])
    p.add_argument("--depth", type=int, default=50)
    p.add_argument("--pool", type=lambda s: tuple(int(x) for x in s.split("x")), default=(32, 8),
                   help="PROCESSESxTHREADS")
    p.add_argument("--gib", type=lambda s: numbers(s, float), default=[0.25, 3])
    p.add_argument("--peer-python", default=None,
                   help="the interpreter of the peer table (default: trixie's python3.13, whose root has austin)")
    p.add_argument("--skip", type=lambda s: set(s.split(",")), default=set(),
                   help="comma-separated: threads, cli, nostop, peer, tree, cores")
    args = p.parse_args()
    print("Measured %s; %s at the start." % (machine(), load()))
    if "threads" not in args.skip or "nostop" not in args.skip:
        threads_section(args, args.skip)
    if "peer" not in args.skip:
        peer_section(args)
    if "tree" not in args.skip:
        tree_section(args)
    if "cores" not in args.skip:
        cores_section(args)


if __name__ == "__main__":
    main()

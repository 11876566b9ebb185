#!/usr/bin/env python3
"""Memory benchmark: what pyhang adds to gdb's resident memory on a large core.

  native/bench/memory.py [--gib 3] [--python /usr/bin/python3.11]

Starts a Python process holding GIB GiB of touched memory and a few parked
threads, makes a core with gcore, then in one gdb session prints gdb's
VmRSS after loading the core, after `source pyhang.gdb`, and after
`pyhang report --json`.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

RSS = "python print('RSS', [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmRSS')][0])"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gib", type=float, default=3)
    p.add_argument("--python", default="/usr/bin/python3.11")
    args = p.parse_args()
    script = os.path.join(harness.SCENARIOS, "parked_threads.py")
    hog = ("blob = b'\\x01' * int(%f * (1 << 30)); p = %r; "
           "exec(compile(open(p).read(), p, 'exec'), {'__file__': p, '__name__': '__main__', 'blob': blob})"
           % (args.gib, script))
    with harness.Scenario([args.python, "-u", "-c", hog, "4", "10"], ready_timeout=600) as s:
        core = s.gcore()
        size = os.path.getsize(core)
        out = subprocess.run(["gdb", "-nx", "-batch", args.python, "-c", core, "-ex", RSS,
                              "-ex", "source " + harness.GDBEXT, "-ex", RSS,
                              "-ex", "pipe pyhang report --json | wc -c", "-ex", RSS],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        rss = [int(l.split()[1]) for l in out.splitlines() if l.startswith("RSS")]
        print("core: %.2f GiB" % (size / (1 << 30)))
        if len(rss) == 3:
            print("gdb VmRSS: %d MiB with the core loaded, %d MiB after source pyhang.gdb, %d MiB after "
                  "pyhang report --json: pyhang adds %d MiB" % (rss[0] // 1024, rss[1] // 1024, rss[2] // 1024,
                                                                (rss[2] - rss[0]) // 1024))
        else:
            print(out[-2000:])


if __name__ == "__main__":
    main()

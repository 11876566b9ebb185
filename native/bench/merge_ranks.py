#!/usr/bin/env python3
"""Benchmark of `pyhang job`'s merge (issue 39 item 4): N rank documents of
T threads each, as the nodes of a job stream them, merged on one core.

  native/bench/merge_ranks.py [--ranks 10000] [--threads 64] [--per-node 80] [--template STREAM]

The documents are made from real ones: the pyhang-rank/1 documents of a
saved node stream (`pyhang job --save DIR`: DIR/NODE.jsonl; default
testdata/reports/job-rank.jsonl), each rank a copy of one of them with its
threads repeated to T (new TIDs), its rank its own; every 97th rank
waits one frame deeper (an odd class).  They are written as one stream per
node (N / per-node nodes) to a temporary directory, then `pyhang merge
DIR/*.jsonl` runs in a process of its own: its wall time and its peak
resident memory (getrusage of the child) are printed; the goal is under
10 s and 1 GB.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
TEMPLATE = os.path.join(ROOT, "testdata", "reports", "job-rank.jsonl")


def templates(path):
    with open(path) as f:
        docs = [json.loads(line) for line in f if line.strip()]
    return [d for d in docs if d.get("schema") == "pyhang-rank/1" and d.get("report")]


def widened(doc, threads):
    """The rank document with its threads repeated to `threads` (new TIDs)."""
    report = doc["report"]
    base = report["threads"]
    out = []
    for i in range(threads):
        t = dict(base[i % len(base)])
        if i >= len(base):
            t["tid"] = 4_000_000 + i
            t["python_name"] = None if t.get("python_name") == "MainThread" else t.get("python_name")
        out.append(t)
    return dict(doc, report=dict(report, threads=out))


def write_streams(directory, docs, ranks, threads, per_node):
    """The node streams, as pyhang job-node writes them (pyhang.jobs.rank_line); bytes written."""
    from pyhang import jobs

    def line(d, odd):
        report = widened(d, threads)["report"]
        return jobs.rank_line("NODE", "bench", d["pid"], {"RANK": "", "SLURM_PROCID": ""},
                              _deeper(report) if odd else report, report.get("exit_status"), None)
    usual, odd = [line(d, False) for d in docs], [line(d, True) for d in docs]
    size = 0
    for node in range((ranks + per_node - 1) // per_node):
        name = "node%04d" % node
        with open(os.path.join(directory, name + ".jsonl"), "w") as f:
            n = 0
            for rank in range(node * per_node, min(ranks, (node + 1) * per_node)):
                text = (odd if rank % 97 == 96 else usual)[rank % len(docs)]
                # its rank and node, in its summary (which comes first)
                text = text.replace('"node":"NODE"', '"node":"%s"' % name, 1).replace(
                    '"RANK":""', '"RANK":"%d"' % rank, 1)
                f.write(text + "\n")
                n += 1
                size += len(text) + 1
            f.write(json.dumps({"schema": "pyhang-node/1", "node": name, "processes": n, "found_by": "bench",
                                "problem": None}) + "\n")
    return size


def _deeper(report):
    """The report with its main thread one line further in its innermost frame (an odd class)."""
    main = dict(report["threads"][0])
    f = main["python_frames"]
    main["python_frames"] = [dict(f[0], line=f[0]["line"] + 1)] + f[1:]
    return dict(report, threads=[main] + report["threads"][1:])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, default=10000)
    p.add_argument("--threads", type=int, default=64)
    p.add_argument("--per-node", type=int, default=80)
    p.add_argument("--template", default=TEMPLATE)
    p.add_argument("--collect", type=int, metavar="FANOUT",
                   help="also collect the streams as pyhang job does, one launcher per node (here `cat` of its "
                        "stream: fake nodes), FANOUT at a time, and time that")
    args = p.parse_args()
    docs = templates(args.template)
    with tempfile.TemporaryDirectory() as tmp:
        size = write_streams(tmp, docs, args.ranks, args.threads, args.per_node)
        files = sorted(os.path.join(tmp, n) for n in os.listdir(tmp))
        began = time.monotonic()
        done = subprocess.run(["taskset", "-c", "0", os.path.join(ROOT, "python", "bin", "pyhang"), "merge"] + files,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        took = time.monotonic() - began
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if args.collect:
            from pyhang import jobs
            from pyhang.analysis import merge as merge_analysis
            began = time.monotonic()
            runs = jobs.collect([(os.path.basename(f)[:-6], ["cat", f]) for f in files], deadline=60,
                                fanout=args.collect)
            collected = time.monotonic() - began
            m = merge_analysis.Merge()
            for run in runs:
                merge_analysis.read_stream(m, run.node, run.lines, failure=jobs.failure(run, 60))
            merge_analysis.analyse(m)
            print("collected from %d fake nodes, %d at a time, in %.2f s; then merged in %.2f s (%d ranks, exit "
                  "status %d)" % (len(runs), args.collect, collected, time.monotonic() - began - collected,
                                  len(m.members), m.exit_status))
    head = done.stdout.splitlines()[:3]
    print("%d rank documents of %d threads (%d nodes, %.0f MB of JSON): pyhang merge took %.2f s, peak RSS %.0f MB, "
          "exit status %d" % (args.ranks, args.threads, len(files), size / 1e6, took, peak, done.returncode))
    print("\n".join(head))
    if done.stderr:
        print(done.stderr[:2000], file=sys.stderr)
    return 0 if took < 10 and peak < 1024 else 1


if __name__ == "__main__":
    sys.exit(main())

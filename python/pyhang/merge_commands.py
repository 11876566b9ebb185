"""The commands that merge reports: `pyhang merge REPORT.json...` (files
already made) and `pyhang job` (every process of a job on every node, asked
through Slurm, ssh or this machine: pyhang.jobs), both rendered by
render.merge.  No gdb and no native module: any Python 3 merges."""
import argparse
import os
import sys

from pyhang.help_format import Formatter as _Formatter
from pyhang.model.kinds import ExitStatus

FAILED = ExitStatus.FAILED


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
    if args.dot and args.json:
        p.error("--dot goes without --json")
    # Plain Python, no gdb and no native module: any Python 3 merges reports.
    from pyhang.analysis.merge import merge_files
    from pyhang.render import merge as render_merge
    m = merge_files(args.paths)
    for problem in m.problems:
        sys.stderr.write(render_merge.problem_line(problem) + "\n")
    if not m.members:
        sys.stderr.write("pyhang merge: no process could be read from the %d file%s given\n" % (
            len(args.paths), "" if len(args.paths) == 1 else "s"))
        if args.json:
            print(render_merge.dumps(m, args.pretty))
        return FAILED
    _print_merge(m, args)
    return m.exit_status


def _print_merge(m, args, title="pyhang merge"):
    from pyhang.render import merge as render_merge
    if args.dot and title != "pyhang merge":     # pyhang job: the prefix tree of the ranks' stacks
        from pyhang.render.dot import merge_tree_dot
        sys.stdout.write(merge_tree_dot(m))
    elif args.dot:
        from pyhang.render.dot import merge_dot
        sys.stdout.write(merge_dot(m))
    else:
        print(render_merge.dumps(m, args.pretty) if args.json else render_merge.render_merge_text(m, title))


def job_parser():
    from pyhang import jobs
    p = argparse.ArgumentParser(prog="pyhang job", formatter_class=_Formatter,
                                description="Every process of a job, on every node, read without stopping it "
                                            "(pyhang report --no-stop --once) and merged: the odd ranks and why.")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--slurm", metavar="JOBID", help="a running Slurm job: one srun --overlap step per node")
    which.add_argument("--hosts", metavar="FILE", help="hosts, one a line: ssh to each, its rank processes")
    which.add_argument("--local", action="store_true", help="this machine's rank processes")
    p.add_argument("--json", action="store_true", help="the pyhang-merge/1 document")
    p.add_argument("--pretty", action="store_true", help="with --json: indented")
    p.add_argument("--dot", action="store_true",
                   help="the prefix tree of the ranks' main-thread stacks in Graphviz DOT, odd branches red")
    p.add_argument("--save", metavar="DIR", help="keep each node's answer as DIR/NODE.jsonl (pyhang merge reads it)")
    p.add_argument("--fanout", type=int, default=jobs.FANOUT, metavar="N",
                   help="nodes asked at once (default %d)" % jobs.FANOUT)
    p.add_argument("--deadline", type=float, default=jobs.DEADLINE, metavar="S",
                   help="seconds each node has to answer; a late one is stopped and named (default %g)"
                        % jobs.DEADLINE)
    p.add_argument("--remote-pyhang", metavar="PATH",
                   help="pyhang's path on the nodes (default: this one's, for srun and --local; `pyhang` for ssh)")
    p.add_argument("--srun-arg", action="append", default=[], metavar="ARG",
                   help="an extra srun argument (repeat it), e.g. --srun-arg=--partition=debug")
    p.add_argument("--ssh-arg", action="append", default=[], metavar="ARG", help="an extra ssh argument (repeat it; --ssh-arg=-p for one that starts with a dash)")
    p.add_argument("--stop", action="store_true", help="stop each process to read it, as report -p does (ptrace, no gdb)")
    return p


def _own_pyhang():
    """This pyhang's command line script: the checkout's or the installation's bin/pyhang."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for candidate in (os.path.join(os.path.dirname(package), "bin", "pyhang"),
                      os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(package))), "bin", "pyhang"),
                      os.path.join(package, "bin", "pyhang")):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return "pyhang"


def job(argv):
    """`pyhang job (--slurm JOBID | --hosts FILE | --local)`: each node's
    answer collected (pyhang.jobs), then merged (analysis.merge); every node
    or rank that could not be read is one line on stderr.  The exit status
    is the merge's (the worst of the ranks', incomplete when something is
    missing and no hang was found); FAILED when the job cannot be asked or
    no rank could be read."""
    from pyhang import jobs
    p = job_parser()
    args = p.parse_args(argv)
    if args.dot and args.json:
        p.error("--dot goes without --json")
    if args.pretty and not args.json:
        p.error("--pretty goes with --json: it indents the JSON document")
    if args.fanout < 1 or args.deadline <= 0:
        p.error("--fanout takes a number of nodes >= 1, --deadline seconds > 0")
    mode = "slurm" if args.slurm else "ssh" if args.hosts else "local"
    remote = args.remote_pyhang or ("pyhang" if mode == "ssh" else _own_pyhang())
    try:
        nodes = jobs.slurm_nodes(args.slurm) if mode == "slurm" else jobs.read_hosts(args.hosts) \
            if mode == "ssh" else [os.uname().nodename]
    except jobs.JobError as exc:
        sys.stderr.write("pyhang job: %s\n" % exc)
        return FAILED
    plan = jobs.launchers(mode, args.slurm, nodes, remote, args.deadline, args.srun_arg, args.ssh_arg, args.stop)
    tty = sys.stderr.isatty()
    runs = jobs.collect(plan, deadline=args.deadline, fanout=args.fanout,
                        progress=(lambda r: jobs.progress_line(r, sys.stderr)) if tty else None)
    if tty:
        sys.stderr.write("\r\033[K")
    if args.save:
        try:
            jobs.save(runs, args.save)
        except OSError as exc:
            sys.stderr.write("pyhang job: cannot save to %s: %s\n" % (args.save, exc.strerror))
    from pyhang.analysis import merge as merge_analysis
    from pyhang.render import merge as render_merge
    m = merge_analysis.Merge()
    for run in runs:
        merge_analysis.read_stream(m, run.node, run.lines, failure=jobs.failure(run, args.deadline))
    merge_analysis.analyse(m)
    for problem in m.problems:
        sys.stderr.write("pyhang job: node %s\n" % render_merge.problem_line(problem)[len("pyhang merge: "):])
    if not m.members:
        sys.stderr.write("pyhang job: no process of the job could be read on its %d node%s\n" % (
            len(nodes), "" if len(nodes) == 1 else "s"))
        if args.json:
            print(render_merge.dumps(m, args.pretty))
        return FAILED
    _print_merge(m, args, "pyhang job%s" % (" %s" % args.slurm if args.slurm else ""))
    return m.exit_status

"""`pyhang job`: the reports of every process of a job, from every node it
runs on, through the cluster's own launcher, merged (analysis.merge).

Two halves.  On each node, `pyhang job-node` finds the job's processes
(Slurm's own record, `scontrol listpids JOB NODE`, else SLURM_JOB_ID in
/proc/PID/environ; with --ranks the Python processes whose environment
names a rank), takes each one's report with `pyhang report --no-stop
--once --json` (a subprocess each, in parallel, under a deadline), and
prints one `pyhang-rank/1` document a line, then one `pyhang-node/1`
document that says the stream is whole.  On the caller, `pyhang job`
starts one launcher per node (`srun --overlap --jobid J -w NODE`, `ssh
HOST`, or this machine), at most --fanout at a time, each in its own
process group with its own deadline: a node that does not answer in time
is stopped and named, and never holds up the others.  The answers come
back over the launchers' stdout (no shared file system); --save DIR keeps
each node's stream as it came.

One launcher per node, not one `srun -N<nodes>` for all: srun multiplexes
its tasks' stdout into one stream, where the long lines of two nodes can
interleave, and a deadline could only stop all of them at once.
"""
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time

from pyhang import VERSION, procfs
from pyhang.proc_record import JOB_VARIABLES

RANK_SCHEMA = "pyhang-rank/1"
NODE_SCHEMA = "pyhang-node/1"

# The rank variables a process of a job without Slurm (--ranks) carries.
RANK_VARIABLES = ("RANK", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")
DEADLINE = 60.0          # seconds a node has to answer (--deadline)
FANOUT = 32              # nodes asked at once (--fanout)
# Seconds between SIGTERM and SIGKILL of a late launcher: srun, on SIGTERM, has slurmd end the step's processes
# on the node and then exits; killed before it has, it leaves them running (a loaded host took over 2 s).
KILL_GRACE = 5.0
SRUN_ABORT_GAP = 0.2     # seconds between the two SIGINTs that make srun end its step (srun wants them within 1 s)
# What a step into a running job asks for: nothing the job holds (no GPU, no memory of its own, one CPU
# shared with the job's steps), so that it never waits for the job's own resources.
SRUN_ARGS = ("--overlap", "--mem=0", "--gres=none", "--cpus-per-task=1", "--quiet")


def _runs_python(pid):
    """Whether process `pid` runs CPython: its executable is named python*, or it maps a libpython."""
    try:
        exe = os.path.basename(os.readlink("/proc/%d/exe" % pid))
    except OSError:
        return False
    if exe.startswith("python"):
        return True
    try:
        with open("/proc/%d/maps" % pid) as f:
            return any("/libpython" in line for line in f)
    except OSError:
        return False


def _is_pyhang(pid):
    """Whether process `pid` is a pyhang of its own (a job-node or report another `pyhang job` runs)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return b"import pyhang.__main__" in f.read(1 << 16)
    except OSError:
        return False


def listpids(job, node):
    """The PIDs of `job`'s processes on this node, but those of our own
    step, from `scontrol listpids` (the node named, for nodes that share a
    host); None when scontrol cannot say."""
    argv = ["scontrol", "listpids", str(job)] + ([node] if node else [])
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    own = os.environ.get("SLURM_STEP_ID") if os.environ.get("SLURM_JOB_ID") == str(job) else None
    out = []
    for line in done.stdout.splitlines()[1:]:
        cols = line.split()
        if len(cols) >= 3 and cols[0].isdigit() and cols[2] != own:
            out.append(int(cols[0]))
    return out


def _environ_pids(wanted):
    """[(pid, variables)] of the processes whose environment `wanted` accepts."""
    out = []
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        env = procfs.environment(int(name), JOB_VARIABLES)
        if env and wanted(env):
            out.append(int(name))
    return out


def job_processes(job, node):
    """(pids, found_by) of the Python processes of Slurm job `job` on this node."""
    pids, found_by = listpids(job, node), "scontrol listpids"
    if pids is None:
        own_step = os.environ.get("SLURM_STEP_ID") if os.environ.get("SLURM_JOB_ID") == str(job) else None
        pids = _environ_pids(lambda e: (e.get("SLURM_JOB_ID") or e.get("SLURM_JOBID")) == str(job) and
                             (not node or e.get("SLURMD_NODENAME") in (None, node)) and
                             (own_step is None or e.get("SLURM_STEP_ID") != own_step))
        found_by = "SLURM_JOB_ID in /proc/PID/environ"
    return sorted(p for p in set(pids) if p != os.getpid() and _runs_python(p) and not _is_pyhang(p)), found_by


def rank_processes():
    """(pids, found_by) of this machine's Python processes whose environment names a rank."""
    pids = _environ_pids(lambda e: any(v in e for v in RANK_VARIABLES))
    return sorted(p for p in pids if _runs_python(p) and not _is_pyhang(p)), "rank variables (%s) in /proc/PID/environ" % ", ".join(
        RANK_VARIABLES[:3])


def _report_argv():
    """This pyhang's command line for a report: its own interpreter and package."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [sys.executable, "-S", "-c", "import sys; sys.path.insert(0, %r); import pyhang.__main__" % package,
            "report"]


def _one_report(pid, deadline, extra):
    """(report document or None, exit status or None, problem or None) of process `pid`."""
    argv = _report_argv() + ["--json", "-p", str(pid)] + list(extra)
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return None, None, "cannot run pyhang report: %s" % exc.strerror
    try:
        out, err = proc.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        _stop(proc)
        return None, None, "no report within %gs" % deadline
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("schema") == "pyhang-error/1":
        return None, proc.returncode, str((doc.get("error") or {}).get("message"))
    if not isinstance(doc, dict):
        last = err.decode("utf-8", "replace").strip().splitlines()
        return None, proc.returncode, last[0] if last else "pyhang report printed no document (exit status %d)" % \
            proc.returncode
    return doc, proc.returncode, None


def rank_line(node, host, pid, environment, doc, status, problem):
    """One pyhang-rank/1 document, one line: its summary first (what the
    merge takes: analysis.merge.summary, with the rank's own facts), so that
    a merge of thousands decodes that alone (analysis.merge.RANK_PREFIX),
    then the report and the rest."""
    from pyhang.analysis import merge
    schema = doc.get("schema") if isinstance(doc, dict) else None
    s = merge.summary(doc) if schema == merge.REPORT_SCHEMA and isinstance(doc.get("threads"), list) else {}
    s.update(node=node, rank_pid=pid, rank_environment=environment, report_schema=schema,
             report_version=doc.get("pyhang_version") if isinstance(doc, dict) else None, problem=problem)
    compact = (",", ":")
    line = merge.RANK_PREFIX + json.dumps(s, separators=compact) + ',"report":' + json.dumps(doc, separators=compact)
    rest = json.dumps({"pyhang_version": VERSION, "node": node, "host": host, "pid": pid, "environment": environment,
                       "exit_status": status, "problem": problem}, separators=compact)
    return line + "," + rest[1:]


def node_main(argv):
    """`pyhang job-node (--slurm JOB | --ranks) [--deadline S] [--stop]`:
    the node's half; the stream on stdout, exit status 0 when it was whole."""
    import argparse
    p = argparse.ArgumentParser(prog="pyhang job-node", description="the reports of a job's processes on this "
                                "node, one pyhang-rank/1 JSON document a line, then a pyhang-node/1 document")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--slurm", metavar="JOBID")
    which.add_argument("--ranks", action="store_true", help="the Python processes whose environment names a rank")
    p.add_argument("--deadline", type=float, default=DEADLINE - 5, metavar="S")
    p.add_argument("--stop", action="store_true", help="stop each process to read it (as report -p does) instead of --no-stop")
    args = p.parse_args(argv)
    node = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    host = socket.gethostname()
    if args.slurm is not None:
        pids, found_by = job_processes(args.slurm, os.environ.get("SLURMD_NODENAME"))
    else:
        pids, found_by = rank_processes()
    extra = ["--once"] + ([] if args.stop else ["--no-stop"])
    lock = threading.Lock()

    def one(pid):
        env = procfs.environment(pid, JOB_VARIABLES) or {}
        doc, status, problem = _one_report(pid, args.deadline, extra)
        line = rank_line(node, host, pid, env, doc, status, problem)
        with lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
    workers = [threading.Thread(target=one, args=(pid,)) for pid in pids]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    sys.stdout.write(json.dumps({"schema": NODE_SCHEMA, "pyhang_version": VERSION, "node": node, "host": host,
                                 "processes": len(pids), "found_by": found_by, "problem": None}) + "\n")
    sys.stdout.flush()
    return 0


# ------------------------------------------------------------- the caller's half


class JobError(Exception):
    """The job cannot be asked at all (no such job, ended, no scontrol): one line."""


def _scontrol(*args):
    try:
        done = subprocess.run(["scontrol"] + list(args), capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise JobError("scontrol is not installed here: run pyhang job --slurm where Slurm's commands are")
    except subprocess.TimeoutExpired:
        raise JobError("scontrol %s did not answer within 30 s" % " ".join(args))
    return done


def slurm_nodes(job):
    """The nodes Slurm job `job` runs on; JobError when it does not run."""
    if not re.match(r"^[0-9]+(_[0-9]+)?$", str(job)):
        raise JobError("%r is no Slurm job id" % job)
    done = _scontrol("show", "job", "-o", str(job))
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["scontrol exit status %d" % done.returncode])[-1]
        raise JobError("Slurm job %s cannot be found: %s" % (job, why))
    fields = dict(kv.split("=", 1) for kv in done.stdout.split() if "=" in kv)
    state = fields.get("JobState", "?")
    if state not in ("RUNNING", "SUSPENDED"):
        raise JobError("Slurm job %s is %s%s: it runs on no node to look at" % (
            job, state, " (it has ended)" if state in ("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
                                                       "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE")
            else ""))
    nodelist = fields.get("NodeList", "")
    done = _scontrol("show", "hostnames", nodelist)
    nodes = done.stdout.split() if done.returncode == 0 else []
    if not nodes:
        raise JobError("Slurm job %s names no node (NodeList=%r)" % (job, nodelist))
    return nodes


def read_hosts(path):
    """The hosts of a host file: one a line (the first word), # comments."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise JobError("cannot read the host file %s: %s" % (path, exc.strerror))
    hosts = [line.split("#", 1)[0].split()[0] for line in lines if line.split("#", 1)[0].split()]
    if not hosts:
        raise JobError("the host file %s names no host" % path)
    return list(dict.fromkeys(hosts))


def node_deadline(deadline):
    """The seconds a node's pyhang gives each report within the node's own
    `deadline`: room left for the launcher and the stream (5 s, or a
    quarter of a short deadline)."""
    return round(max(deadline - 5, deadline * 0.75), 1)


def launchers(mode, job, nodes, remote, deadline, srun_args=(), ssh_args=(), stop=False):
    """[(node, argv)]: how each node is asked."""
    node_args = ["job-node"] + (["--slurm", str(job)] if mode == "slurm" else ["--ranks"]) + \
        ["--deadline", "%g" % node_deadline(deadline)] + (["--stop"] if stop else [])
    out = []
    for node in nodes:
        if mode == "slurm":
            argv = ["srun", "--jobid", str(job), "-N1", "-n1", "-w", node] + list(SRUN_ARGS) + list(srun_args) + \
                [remote] + node_args
        elif mode == "ssh":
            argv = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"] + list(ssh_args) + \
                [node, " ".join(shlex.quote(a) for a in [remote] + node_args)]
        else:
            argv = [remote] + node_args
        out.append((node, argv))
    return out


class NodeRun:
    """One node's launcher: its output, and how it ended."""

    def __init__(self, node, argv):
        self.node, self.argv = node, argv
        self.proc = None
        self.out = b""
        self.err = b""
        self.started = None
        self.ended = None
        self.timed_out = False
        self.error = None           # the launcher could not be started

    @property
    def lines(self):
        return self.out.decode("utf-8", "replace").splitlines()


def _signal(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(proc, srun=False):
    """A launcher (and its process group) stopped: SIGTERM, then SIGKILL.  srun first gets SIGINT twice
    within a second, its own way to end a step: it has slurmd kill the step's processes on every node and
    then exits (a SIGTERM it only forwards to them: on a loaded host a step's processes outlived it)."""
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL) if srun else (signal.SIGTERM, signal.SIGKILL)
    for sig in signals:
        _signal(proc, sig)
        if sig == signal.SIGINT:
            time.sleep(SRUN_ABORT_GAP)
            _signal(proc, sig)
        try:
            proc.wait(KILL_GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def _run(run, deadline):
    run.started = time.monotonic()
    try:
        run.proc = subprocess.Popen(run.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        run.error = "cannot run %s: %s" % (run.argv[0], exc.strerror)
        run.ended = time.monotonic()
        return
    try:
        run.out, run.err = run.proc.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        run.timed_out = True
        _stop(run.proc, srun=os.path.basename(run.argv[0]) == "srun")
        out, err = run.proc.communicate()
        run.out, run.err = out or b"", err or b""
    run.ended = time.monotonic()


def collect(plan, deadline=DEADLINE, fanout=FANOUT, progress=None):
    """Runs every node's launcher, at most `fanout` at a time, each stopped
    at its deadline; [NodeRun] in the plan's order.  `progress(runs)` is
    called while they run (about 4 times a second)."""
    runs = [NodeRun(node, argv) for node, argv in plan]
    pending = list(runs)
    active = []
    lock = threading.Lock()
    while pending or active:
        while pending and len(active) < max(1, fanout):
            run = pending.pop(0)
            t = threading.Thread(target=_run, args=(run, deadline), daemon=True)
            with lock:
                active.append((run, t))
            t.start()
        time.sleep(0.05)
        active = [(r, t) for r, t in active if t.is_alive()]
        if progress is not None:
            progress(runs)
    return runs


def failure(run, deadline):
    """(MergeProblem kind, facts) of a node's run that did not end well, or None."""
    from pyhang.model.kinds import MergeProblem
    if run.error is not None:
        return MergeProblem.NODE_FAILED, {"status": None, "error": run.error}
    if run.timed_out:
        return MergeProblem.NODE_TIMEOUT, {"deadline": deadline}
    if run.proc.returncode != 0:
        lines = [line for line in run.err.decode("utf-8", "replace").splitlines() if line.strip()]
        return MergeProblem.NODE_FAILED, {"status": run.proc.returncode, "error": lines[-1].strip()[:300]
                                          if lines else None}
    return None


def save(runs, directory):
    """Each node's stream as it came, DIR/NODE.jsonl (and its stderr, DIR/NODE.stderr, when not empty)."""
    os.makedirs(directory, exist_ok=True)
    for run in runs:
        name = re.sub(r"[^A-Za-z0-9._-]", "_", run.node)
        with open(os.path.join(directory, name + ".jsonl"), "wb") as f:
            f.write(run.out)
        if run.err:
            with open(os.path.join(directory, name + ".stderr"), "wb") as f:
                f.write(run.err)


def progress_line(runs, stream):
    """The progress line on a terminal: nodes answered of all, ranks seen, the late ones."""
    now = time.monotonic()
    done = [r for r in runs if r.ended is not None]
    ranks = sum(r.out.count(b'"schema":"pyhang-rank/1"') for r in done)
    late = [r.node for r in runs if r.ended is None and r.started is not None and now - r.started > 5]
    text = "pyhang job: %d of %d nodes answered, %d rank%s%s" % (
        len(done), len(runs), ranks, "" if ranks == 1 else "s", "; waiting for %s" % ", ".join(late[:4]) + (" ..." if len(late) > 4 else "")
        if late else "")
    stream.write("\r\033[K" + text[:200])
    stream.flush()

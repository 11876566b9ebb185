"""Issue 39: `pyhang job --slurm JOBID` on a real Slurm (Debian 12's
slurm-wlm 22.05: munged, slurmctld and two slurmd started here,
testdata/slurm_cluster.py) running torch.distributed gloo jobs of 2 nodes x
2 ranks (testdata/scenarios/slurm_ranks.py, Debian's python3-torch 1.13).
In one job rank 3's main thread is stuck in a Python deadlock (ABBA with
its thread "prefetch") while ranks 0-2 wait in all_reduce; in the other
rank 3 waits in barrier while ranks 0-2 wait in all_reduce.  One command
names the odd rank, its node and PID, and its cause from its own report;
a node whose pyhang does not answer within the deadline is stopped and
named, the rest merged, and the exit status says incomplete unless a hang
was found among the rest; a job that does not exist or has ended is one
line.  If a hang did not happen the fixture fails: no test is skipped for
it."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

import harness

sys.path.insert(0, os.path.join(harness.ROOT, "testdata"))
sys.path[0:0] = [os.path.join(harness.build_dir(), "python"), os.path.join(harness.ROOT, "python")]
from pyhang import jobs as pyhang_jobs  # noqa: E402 (the fixture is `jobs`)
import slurm_cluster  # noqa: E402

PYTHON = "/usr/bin/python3.11"
SCRIPT = os.path.join(harness.ROOT, "testdata", "scenarios", "slurm_ranks.py")
MERGE_SCHEMA = os.path.join(harness.ROOT, "docs", "pyhang-merge-1.schema.json")
WHY_NOT = slurm_cluster.available() or (
    None if os.path.isdir("/usr/lib/python3/dist-packages/torch") else "no python3-torch (apt-get install python3-torch)")
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Job:
    def __init__(self, cluster, tmp, mode):
        self.mode, self.name = mode, "pyhang-%s-%d" % (mode, os.getpid())
        self.truth = os.path.join(tmp, mode)
        self.proc = subprocess.Popen(
            ["srun", "-N2", "--ntasks-per-node=2", "-J", self.name, PYTHON, SCRIPT, mode, str(_free_port())],
            env=dict(cluster.env, PYHANG_TRUTH=self.truth), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.cluster, self.id, self.ranks = cluster, None, None

    def wait(self, timeout=90):
        """The job's id and its ranks' records, once every rank waits (else the test fails)."""
        paths = [self.truth + ".rank%d" % r for r in range(4)]
        end = time.monotonic() + timeout
        while not all(os.path.exists(p) for p in paths):
            if self.proc.poll() is not None or time.monotonic() > end:
                out = self.proc.stdout.read().decode(errors="replace") if self.proc.poll() is not None else ""
                pytest.fail("the %s job's ranks did not all block (srun: %s)\n%s" % (self.mode, self.proc.poll(),
                                                                                     out[-3000:]))
            time.sleep(0.2)
        self.ranks = {}
        for p in paths:
            with open(p) as f:
                r = json.load(f)
            self.ranks[r["rank"]] = r
        self.id = self.cluster.job_id(self.name)
        return self

    def stop(self):
        if self.id is not None:
            self.cluster.run("scancel", str(self.id), check=False)
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """The cluster and both jobs, started together (torch's import takes seconds per rank)."""
    tmp = str(tmp_path_factory.mktemp("slurm"))
    with slurm_cluster.cluster(os.path.join(tmp, "cluster")) as cluster:
        started = [Job(cluster, tmp, "deadlock"), Job(cluster, tmp, "collective")]
        try:
            for j in started:
                j.wait()
            yield cluster, {j.mode: j for j in started}, tmp
        finally:
            for j in started:
                j.stop()


def job_cli(cluster, *args, timeout=120):
    return harness.pyhang_cli("job", *args, env={"SLURM_CONF": cluster.conf}, timeout=timeout)


def _answer(out):
    """The merge's answer: the first line after its title."""
    lines = out.splitlines()
    assert lines[0].startswith("pyhang job "), out
    return lines[2]


def _validated(doc):
    import jsonschema
    with open(MERGE_SCHEMA) as f:
        jsonschema.validate(doc, json.load(f))
    return doc


def test_job_names_the_rank_in_a_python_deadlock_and_its_cause(jobs):
    cluster, j, _ = jobs
    job = j["deadlock"]
    odd = job.ranks[3]
    status, out, err = job_cli(cluster, "--slurm", job.id)
    # THEN one command names the odd rank, where it runs, and why it is not in all_reduce: its own report's deadlock
    answer = _answer(out)
    assert answer.startswith("rank 3 (%s, PID %d) is not in all_reduce: its MainThread waits to acquire "
                             "threading.Lock " % (odd["node"], odd["pid"])), (answer, err)
    assert "(__main__.LOCK_B) at deadlock (%s:%d)" % (SCRIPT, odd["stack"][0]["line"]) in answer, answer
    assert "in a deadlock (likely) with its thread 'prefetch' (LWP %d), which waits to acquire threading.Lock" % \
        odd["prefetch_tid"] in answer and "(__main__.LOCK_A)" in answer, answer
    # AND its own headline leads, beside the others'; the exit status is the worst of theirs: a deadlock
    assert "  rank 3: Found one deadlock (likely)." in out, out
    assert "  ranks 0-2: Waits on another process" in out, out
    assert status == 3 and err == "", (status, err)
    # AND the prefix tree parts the ranks where their stacks do
    assert "[ranks 0-3]" in out and "[ranks 0-2]" in out and "[rank 3]" in out, out


def test_job_json_carries_the_classes_tree_and_ranks(jobs):
    cluster, j, _ = jobs
    job = j["deadlock"]
    status, out, _ = job_cli(cluster, "--slurm", job.id, "--json")
    doc = _validated(json.loads(out))
    assert status == doc["exit_status"] == 3
    (odd,) = [c for c in doc["classes"] if c["odd"]]
    assert odd["ranks"] == "rank 3" and odd["collective"] is None, odd
    assert [(m["rank"], m["node"], m["pid"]) for m in odd["members"]] == [(3, job.ranks[3]["node"], job.ranks[3]["pid"])]
    (usual,) = [c for c in doc["classes"] if not c["odd"]]
    assert usual["collective"] == "all_reduce" and usual["ranks"] == "ranks 0-2", usual
    assert [n["complete"] for n in doc["nodes"]] == [True, True] and doc["problems"] == []


def test_job_names_the_rank_in_another_collective(jobs):
    cluster, j, _ = jobs
    job = j["collective"]
    odd = job.ranks[3]
    status, out, err = job_cli(cluster, "--slurm", job.id)
    # THEN the ranks in different collectives, which none can finish: a hang (5), though each rank's own
    # report can only say it waits on other processes
    assert _answer(out) == "rank 3 (%s, PID %d) is in barrier while ranks 0-2 (on node1, node2) are in " \
        "all_reduce." % (odd["node"], odd["pid"]), out
    assert status == 5 and err == "", (status, err)


def test_a_node_that_does_not_answer_is_named_and_the_rest_merged(jobs):
    cluster, j, tmp = jobs
    job = j["deadlock"]
    slow = os.path.join(tmp, "slow-on-%s")
    for node in ("node1", "node2"):
        with open(slow % node, "w") as f:
            f.write('#!/bin/sh\n[ "$SLURMD_NODENAME" = %s ] && sleep 300\nexec %s "$@"\n' % (
                node, os.path.join(harness.ROOT, "python", "bin", "pyhang")))
        os.chmod(slow % node, 0o755)
    # node1 (ranks 0, 1) hangs: rank 3's deadlock is still found among the rest (exit 3)
    began = time.monotonic()
    status, out, err = job_cli(cluster, "--slurm", job.id, "--deadline", "4", "--remote-pyhang", slow % "node1")
    took = time.monotonic() - began
    assert "pyhang job: node node1: no complete answer within its deadline of 4s (stopped; no rank report read)" \
        in err.splitlines(), err
    assert _answer(out).startswith("rank 3 (node2, PID %d) is not in all_reduce" % job.ranks[3]["pid"]), out
    assert "1 of 2 nodes answered in full" in out.splitlines()[0], out
    assert status == 3, (status, err)
    # AND the hung node held up nothing: the answer came at its deadline
    assert took < 4 + 2 * pyhang_jobs.KILL_GRACE + 3, took
    # node2 (ranks 2, 3, the odd one) hangs: ranks 0-1 agree, but the answer is incomplete (4), never an all-clear
    status, out, err = job_cli(cluster, "--slurm", job.id, "--deadline", "4", "--remote-pyhang", slow % "node2")
    assert "pyhang job: node node2: no complete answer within its deadline of 4s" in err, err
    assert status == 4, (status, out, err)
    assert "Incomplete:" in out, out
    # AND the late launcher's step was stopped: no wrapper sleeps on, once Slurm has ended the step (slurmd
    # kills its processes after srun is gone: within seconds, not at once)
    deadline = time.monotonic() + 30
    while True:
        left = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p).startswith("sleep\0" + "300")]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert left == [], left


def _cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid) as f:
            return f.read()
    except OSError:
        return ""


def test_saved_answers_merge_again_to_the_same_answer(jobs, tmp_path):
    cluster, j, _ = jobs
    job = j["deadlock"]
    status, out, _ = job_cli(cluster, "--slurm", job.id, "--save", tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["node1.jsonl", "node2.jsonl"]
    again, merged, err = harness.pyhang_cli("merge", *sorted(str(p) for p in tmp_path.iterdir()))
    assert merged.splitlines()[2] == _answer(out) and again == status == 3, (merged, err)


def test_a_job_that_does_not_exist_or_has_ended_is_one_line(jobs):
    cluster, _, _ = jobs
    status, out, err = job_cli(cluster, "--slurm", "987654")
    assert (status, out) == (1, "") and err == "pyhang job: Slurm job 987654 cannot be found: slurm_load_jobs " \
        "error: Invalid job id specified\n", err
    cluster.run("srun", "-N1", "-J", "pyhang-ended", "true")
    ended = cluster.run("squeue", "-h", "-t", "all", "-n", "pyhang-ended", "-o", "%i").stdout.split()
    done = cluster.run("scontrol", "show", "job", "-o").stdout
    ids = [line.split()[0].split("=")[1] for line in done.splitlines() if "JobName=pyhang-ended" in line]
    status, out, err = job_cli(cluster, "--slurm", (ended or ids)[-1])
    assert status == 1 and err.startswith("pyhang job: Slurm job %s is COMPLETED (it has ended)" % (ended or ids)[-1]), err

"""`pyhang job`'s merge without gdb or Slurm, on synthetic streams of
pyhang-rank/1 documents: a node's stream parsed (whole, cut short, with
garbage, with a document of another pyhang), ranks compressed to ranges,
the prefix tree of the main threads' stacks with the ranks on each branch,
ranks grouped by where they wait with the odd class and its cause taken
from its own report, the members' differing headlines first, and the exit
status: the worst of the members', incomplete when a node is missing and
no hang was found among the rest."""
import json
import os

import jsonschema

from pyhang import jobs
from pyhang.analysis import merge as merge_analysis
from pyhang.model.kinds import MergeProblem
from pyhang.render import merge as render_merge

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = os.path.join(ROOT, "docs", "pyhang-merge-1.schema.json")
C10D = "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"
ALL_REDUCE = [("all_reduce", C10D, 1541), ("main", "/job/train.py", 77), ("<module>", "/job/train.py", 86)]
BARRIER = [("barrier", C10D, 3152), ("main", "/job/train.py", 79), ("<module>", "/job/train.py", 86)]
STUCK = [("load", "/job/train.py", 64), ("main", "/job/train.py", 81), ("<module>", "/job/train.py", 86)]
PREFETCH = [("prefetch", "/job/train.py", 53)]
COLLECTIVE = {"kind": "collective", "detail": "waits for the other ranks in torch.distributed's all_reduce (gloo): "
                                              "they are other processes [likely]"}


def frames(stack):
    return [{"function": f, "file": fi, "line": li} for f, fi, li in stack]


def report(pid, main, blocked=None, status=4, headline="Waits on another process: ...", deadlock=False):
    threads = [{"tid": pid, "name": "python3", "python_name": "MainThread", "python_frames": frames(main),
                "blocked_on": dict(blocked or COLLECTIVE)}]
    doc = {"schema": "pyhang-report/1", "pyhang_version": "0.1.0", "headline": headline, "exit_status": status,
           "target": {"kind": "live", "pid": pid}, "threads": threads, "deadlocks": [], "verdicts": []}
    if deadlock:
        threads.append({"tid": pid + 5, "name": "prefetch", "python_name": None, "python_frames": frames(PREFETCH),
                        "blocked_on": {"kind": "py-lock", "detail": "waits to acquire threading.Lock 0x2 "
                                       "(__main__.LOCK_A): threading.Lock does not record its owner"}})
        doc["deadlocks"] = [{"threads": [pid, pid + 5], "confidence": "likely"}]
    return doc


def rank_line(node, rank, doc, problem=None):
    return json.dumps({"schema": "pyhang-rank/1", "pyhang_version": "0.1.0", "node": node, "host": "h", "pid":
                       doc["target"]["pid"] if doc else 99, "environment": {"RANK": str(rank), "SLURM_PROCID": str(rank)},
                       "exit_status": doc["exit_status"] if doc else None, "report": doc, "problem": problem})


def node_line(node, n):
    return json.dumps({"schema": "pyhang-node/1", "node": node, "processes": n, "found_by": "scontrol listpids",
                       "problem": None})


def stuck_rank3():
    return report(1004, STUCK, {"kind": "py-lock", "detail": "waits to acquire threading.Lock 0x1 (__main__.LOCK_B): "
                                "threading.Lock does not record its owner"}, status=3,
                  headline="Found one deadlock (likely).", deadlock=True)


def job(streams, failures=None):
    m = merge_analysis.Merge()
    for node, lines in streams:
        merge_analysis.read_stream(m, node, lines, failure=(failures or {}).get(node))
    return merge_analysis.analyse(m)


def four_ranks(odd=None):
    odd = odd or stuck_rank3()
    return [("node1", [rank_line("node1", 0, report(1001, ALL_REDUCE)), rank_line("node1", 1, report(1002, ALL_REDUCE)),
                       node_line("node1", 2)]),
            ("node2", [rank_line("node2", 2, report(1003, ALL_REDUCE)), rank_line("node2", 3, odd),
                       node_line("node2", 2)])]


def validated(m):
    doc = json.loads(render_merge.dumps(m))
    with open(SCHEMA) as f:
        jsonschema.validate(doc, json.load(f))
    return doc


def test_rank_ranges_are_compressed():
    assert render_merge.ranges_text(list(range(63)) + list(range(64, 128))) == "0-62, 64-127"
    assert render_merge.ranges_text([5, 3, 4, 9]) == "3-5, 9"
    assert render_merge.ranges_text([7]) == "7"


def test_the_odd_rank_is_named_with_its_node_pid_and_the_cause_its_own_report_gives():
    m = job(four_ranks())
    answer = render_merge.merge_headline(m)
    assert answer == ("rank 3 (node2, PID 1004) is not in all_reduce: its MainThread waits to acquire threading.Lock "
                      "0x1 (__main__.LOCK_B) at load (/job/train.py:64), in a deadlock (likely) with its thread "
                      "'prefetch' (LWP 1009), which waits to acquire threading.Lock 0x2 (__main__.LOCK_A).")
    assert m.exit_status == 3      # the worst of the members'
    text = render_merge.render_merge_text(m, "pyhang job 7")
    lines = text.splitlines()
    assert lines[0] == "pyhang job 7: 4 processes in 2 groups by Python stack; 2 of 2 nodes answered in full"
    assert lines[2] == answer
    # the members' own headlines, where they differ, the deadlock first
    assert lines[3:6] == ["Their own reports' headlines:", "  rank 3: Found one deadlock (likely).",
                          "  ranks 0-2: Waits on another process: ..."]
    doc = validated(m)
    assert [(c["ranks"], c["odd"], c["collective"]) for c in doc["classes"]] == [
        ("ranks 0-2", False, "all_reduce"), ("rank 3", True, None)]
    assert doc["exit_status"] == 3 and doc["headline"] == answer


def test_the_prefix_tree_carries_the_ranks_on_each_branch():
    m = job(four_ranks())
    (top,) = m.tree.children.values()
    assert top.frame == ("<module>", "/job/train.py", 86) and len(top.members) == 4
    branches = {k[1:]: [x.rank for x in v.members] for k, v in top.children.items()}
    assert branches == {("/job/train.py", 77): [0, 1, 2], ("/job/train.py", 81): [3]}
    lines = render_merge.tree_lines(m.tree)
    assert lines == ["  <module> (/job/train.py:86) [ranks 0-3]",
                     "    main (/job/train.py:77) [ranks 0-2]",
                     "      all_reduce (%s:1541)" % C10D,
                     "    main (/job/train.py:81) [rank 3]",
                     "      load (/job/train.py:64)"]
    assert validated(m)["tree"][0]["children"][1]["ranks"] == "rank 3"


def test_ranks_in_different_collectives_are_a_hang_though_each_only_waits():
    m = job(four_ranks(report(1004, BARRIER, {"kind": "collective", "detail": "waits ... barrier"})))
    assert render_merge.merge_headline(m) == \
        "rank 3 (node2, PID 1004) is in barrier while ranks 0-2 (on node1, node2) are in all_reduce."
    assert m.mismatch and m.exit_status == 5


def test_ranks_all_in_one_collective_are_incomplete_never_an_all_clear():
    streams = four_ranks(report(1004, ALL_REDUCE))
    m = job(streams)
    assert render_merge.merge_headline(m) == "ranks 0-3 wait in all_reduce: no rank is the odd one out."
    assert m.exit_status == 4


def test_a_node_past_its_deadline_is_named_and_the_rest_merged():
    streams = four_ranks()
    # node2 (with the deadlocked rank) cut off at its deadline after one rank: the rest incomplete
    cut = [("node1", streams[0][1]), ("node2", streams[1][1][:1])]
    m = job(cut, {"node2": (MergeProblem.NODE_TIMEOUT, {"deadline": 4.0})})
    assert [render_merge.problem_line(p) for p in m.problems] == [
        "pyhang merge: node2: no complete answer within its deadline of 4s (stopped; 1 rank report read before)"]
    assert [a.complete for a in m.nodes] == [True, False] and m.exit_status == 4
    # node1 late: rank 3's deadlock is found among the rest, which is the answer (3)
    m = job([("node1", []), ("node2", streams[1][1])], {"node1": (MergeProblem.NODE_TIMEOUT, {"deadline": 4.0})})
    assert m.exit_status == 3
    assert render_merge.merge_headline(m).startswith("rank 3 (node2, PID 1004) is not in all_reduce: ")


def test_a_truncated_stream_garbage_and_another_version_are_one_line_each_the_rest_merged():
    other = dict(report(1003, ALL_REDUCE), schema="pyhang-report/2", pyhang_version="9.0")
    lines = [rank_line("node2", 2, other), "srun: warning: something", "{\"half\": ",
             rank_line("node2", 3, stuck_rank3())]           # and no pyhang-node/1 document: cut short
    m = job([("node1", four_ranks()[0][1]), ("node2", lines)])
    said = [render_merge.problem_text(p) for p in m.problems]
    assert said == ["a document of another pyhang (pyhang-report/2, pyhang 9.0), which this pyhang 0.1.0 does not "
                    "read: left out",
                    "2 lines of its answer are no pyhang document, left out (the first: 'srun: warning: something')",
                    "its answer ends before its last document: cut short after 1 rank report read before"]
    assert sorted(x.rank for x in m.members) == [0, 1, 3] and m.exit_status == 3
    validated(m)


def test_a_rank_without_a_report_and_a_node_without_ranks_are_said():
    lines = [rank_line("node2", 2, None, problem="process 1003 is gone"), node_line("node2", 1)]
    m = job([("node1", four_ranks()[0][1]), ("node2", lines), ("node3", [node_line("node3", 0)])])
    assert [render_merge.problem_text(p) for p in m.problems] == [
        "rank 2, PID 99 has no report: process 1003 is gone",
        "runs no Python process of the job (looked up through scontrol listpids)"]
    assert m.exit_status == 4


def test_a_saved_stream_file_merges_as_the_job_did(tmp_path):
    streams = four_ranks()
    for node, lines in streams:
        (tmp_path / (node + ".jsonl")).write_text("\n".join(lines) + "\n")
    m = merge_analysis.merge_files(sorted(str(p) for p in tmp_path.iterdir()))
    assert render_merge.merge_headline(m) == render_merge.merge_headline(job(streams))
    assert m.exit_status == 3 and [a.complete for a in m.nodes] == [True, True]


def test_rank_identity_comes_from_the_job_variables():
    assert merge_analysis.rank_of({"SLURM_PROCID": "5"}) == 5
    assert merge_analysis.rank_of({"RANK": "2", "SLURM_PROCID": "0"}) == 2   # torchrun's rank within the job first
    assert merge_analysis.rank_of({"RANK": "x"}) is None and merge_analysis.rank_of(None) is None


def test_the_launchers_ask_slurm_for_nothing_the_job_holds():
    ((node, argv),) = jobs.launchers("slurm", "42", ["n3"], "/opt/pyhang/bin/pyhang", 30, ["--partition=x"])
    assert node == "n3" and argv[:7] == ["srun", "--jobid", "42", "-N1", "-n1", "-w", "n3"]
    assert {"--overlap", "--mem=0", "--gres=none", "--cpus-per-task=1"} <= set(argv)
    assert argv[-7:] == ["--partition=x", "/opt/pyhang/bin/pyhang", "job-node", "--slurm", "42", "--deadline", "25"]
    ((_, argv),) = jobs.launchers("ssh", None, ["h1"], "/opt/my pyhang", 30)
    assert argv[0] == "ssh" and argv[-2] == "h1" and argv[-1] == "'/opt/my pyhang' job-node --ranks --deadline 25"


def test_a_late_node_is_stopped_at_its_deadline_and_holds_up_no_other(tmp_path):
    import time
    plan = [("slow", ["sh", "-c", "echo '{\"schema\": \"pyhang-rank/1\"}'; exec sleep 30"]),
            ("quick", ["sh", "-c", "echo '{\"schema\":\"pyhang-node/1\",\"processes\":0}'"])]
    began = time.monotonic()
    runs = jobs.collect(plan, deadline=1.0, fanout=2)
    assert time.monotonic() - began < 1.0 + 2 * jobs.KILL_GRACE + 1
    slow, quick = runs
    assert slow.timed_out and jobs.failure(slow, 1.0)[0] == MergeProblem.NODE_TIMEOUT and slow.lines
    assert not quick.timed_out and jobs.failure(quick, 1.0) is None


def test_a_node_rank_line_is_merged_from_its_summary_alone_as_the_whole_document_would_be():
    line = jobs.rank_line("node2", "h", 1004, {"SLURM_PROCID": "3"}, stuck_rank3(), 3, None)
    whole = json.loads(line)          # one JSON document, its summary first
    assert line.startswith(merge_analysis.RANK_PREFIX) and whole["report"]["headline"] == "Found one deadlock (likely)."
    fast = job([("node2", [line, node_line("node2", 1)])])
    # the same document, its summary left out: the report itself is read
    del whole["summary"]
    whole["environment"] = {"SLURM_PROCID": "3"}
    slow = job([("node2", [json.dumps(whole), node_line("node2", 1)])])
    assert fast.members == slow.members and fast.members[0].rank == 3 and fast.members[0].main.deadlock
    # a report the node could not make, and one of another pyhang, through the summary too
    gone = jobs.rank_line("node2", "h", 1005, {"RANK": "4"}, None, None, "process 1005 is gone")
    other = jobs.rank_line("node2", "h", 1006, {}, {"schema": "pyhang-report/2", "pyhang_version": "9.0"}, 3, None)
    m = job([("node2", [gone, other, node_line("node2", 2)])])
    assert [render_merge.problem_text(p) for p in m.problems] == [
        "rank 4, PID 1005 has no report: process 1005 is gone",
        "a document of another pyhang (pyhang-report/2, pyhang 9.0), which this pyhang 0.1.0 does not read: left out"]


def test_the_progress_line_counts_nodes_and_ranks_and_names_the_late_ones():
    import io
    import time
    done, late, waiting = (jobs.NodeRun(n, []) for n in ("node1", "node2", "node3"))
    done.started = late.started = waiting.started = time.monotonic() - 10
    done.ended = time.monotonic()
    done.out = (jobs.rank_line("node1", "h", 1, {"RANK": "0"}, report(1, ALL_REDUCE), 4, None) + "\n").encode()
    waiting.started = time.monotonic()
    out = io.StringIO()
    jobs.progress_line([done, late, waiting], out)
    assert out.getvalue() == "\r\033[Kpyhang job: 1 of 3 nodes answered, 1 rank; waiting for node2"


def test_the_prefix_tree_as_a_picture_the_odd_branch_red():
    from pyhang.render.dot import DEADLOCK, merge_tree_dot
    dot = merge_tree_dot(job(four_ranks()))
    assert '  t0 [label="ranks 0-3\\n<module> (/job/train.py:86)"];' in dot
    # a box per run of frames the same ranks share, the edge labelled with them
    assert '  t1 [label="main (/job/train.py:77)\\nall_reduce (%s:1541)"];' % C10D in dot
    assert '  t0 -> t1 [label="ranks 0-2"];' in dot
    assert '  t0 -> t2 [label="rank 3", %s];' % DEADLOCK in dot


def test_a_host_file_and_a_job_id_that_cannot_be_one_are_one_line(tmp_path):
    import pytest
    hosts = tmp_path / "hostfile"
    hosts.write_text("# the job's hosts\nn1 slots=8\n\nn2\nn1\n")
    assert jobs.read_hosts(str(hosts)) == ["n1", "n2"]
    (tmp_path / "empty").write_text("# none\n")
    with pytest.raises(jobs.JobError, match="names no host"):
        jobs.read_hosts(str(tmp_path / "empty"))
    with pytest.raises(jobs.JobError, match="cannot read the host file"):
        jobs.read_hosts(str(tmp_path / "missing"))
    with pytest.raises(jobs.JobError, match="'4242; rm' is no Slurm job id"):
        jobs.slurm_nodes("4242; rm")
    # a node's pyhang gives each report its deadline less what the launcher and the stream need
    assert jobs.node_deadline(60) == 55 and jobs.node_deadline(4) == 3

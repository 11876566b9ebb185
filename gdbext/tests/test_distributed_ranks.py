"""Issue 28 item 5: three torch.distributed ranks on gloo (CPU only: Debian
12's python3-torch 1.13 on its 3.11, and Debian unstable's torch 2.x on its
3.14 in a root file system of its own), started by torch.multiprocessing.spawn, diverged: rank 0 waits
in dist.barrier() while ranks 1 and 2 wait in dist.all_reduce().  Each rank's
main thread waits for the other ranks in its collective (blocked_on kind
`collective`, the rank and world size read from its frames' locals), which
is a wait on other processes, never "owner unknown"; the tree over the
launcher names the diverged rank first, as `pyhang merge` does; the
multiprocessing resource tracker, idle, is no headline.  Live, from a core
of each rank (Debian's torch), and as a tree."""
import json

import pytest

import harness


CORES_ON = "/usr/bin/python3.11"   # the interpreter whose ranks' cores are read too


def params():
    found = harness.torch_interpreters()
    if not found:
        return [pytest.param(None, id="no-torch", marks=pytest.mark.skip(
            reason="no interpreter with torch here (apt-get install python3-torch)"))]
    return [pytest.param(path, id=name) for name, path in found]


@pytest.fixture(scope="module", params=params())
def job(request):
    """The scenario (torch imports take seconds: started once per interpreter), its ranks by rank, the tree over
    its launcher (JSON, live), and the tree of a core of each rank: on Debian's torch only (three cores of a
    torch process are the slowest part of the suite; a core of 3.14 is read by the other tests)."""
    python = request.param
    with harness.python_scenario(python, "gloo_ranks.py", ready_timeout=180) as s:
        ranks = {r["rank"]: r for r in s.truth["ranks"]}
        harness.wait_processes_parked([r["pid"] for r in ranks.values()])
        live = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
        from_cores = None
        if python == CORES_ON:
            cores = [harness.gcore(ranks[rank]["pid"], s.tmp) for rank in sorted(ranks)]
            from_cores = harness.pyhang_cli("report", "--json", *harness.core_options(python), *cores)
        yield s, ranks, live, from_cores


def _process(tree, pid):
    (doc,) = [p for p in tree["processes"] if p.get("target", {}).get("pid") == pid]
    return doc


def _check_rank(doc, r, world_size, where):
    (main,) = [t for t in doc["threads"] if t["tid"] == r["tid"]]
    b = main["blocked_on"]
    # THEN it waits for the other ranks in its own collective, with the rank and world size its frames hold
    assert b["kind"] == "collective" and b["owners"] == [] and b["owner_source"] == "other-ranks", (where, b)
    assert b["confidence"] == "likely", (where, b)
    # (the backend where the frames' process group says it: torch 1.13's ProcessGroupGloo; 2.x's ProcessGroup
    # keeps it in C++)
    want = "in torch.distributed's %s (%srank %d of %d; rank and world size from the locals of run)" % (
        r["collective"], "gloo; " if "(gloo;" in b["detail"] else "", r["rank"], world_size)
    assert want in b["detail"], (where, b["detail"])
    # AND its Python stack is the one it recorded, under the collective's own frame
    # (torch 2.x wraps each collective in c10d_logger's decorators: their frames lie between)
    frames = main["python_frames"]
    assert frames[0]["function"] == r["collective"], where
    at = next((i for i, f in enumerate(frames) if (f["function"], f["line"]) == (r["stack"][0]["function"],
                                                                                  r["stack"][0]["line"])), None)
    assert at is not None and all("/torch/distributed/" in f["file"] for f in frames[:at]), (where, frames[:4])
    assert [(f["function"], f["line"]) for f in frames[at:at + 2]] == \
        [(f["function"], f["line"]) for f in r["stack"][:2]], (where, frames[:at + 2])
    verdicts = {v["kind"]: v for v in doc["verdicts"]}
    # AND that is a wait on other processes (as is gloo's worker running the collective), never an owner pyhang
    # cannot name; gloo's other worker waits for work, idle
    across = verdicts["waits-on-process"]
    (w,) = [w for w in across["facts"]["waits"] if w["tid"] == r["tid"]]
    assert (w["collective"]["function"], w["collective"]["rank"], w["collective"]["world_size"]) == \
        (r["collective"], r["rank"], world_size), (where, w)
    workers = [w for w in across["facts"]["waits"] if w["collective"].get("transport")]
    assert len(workers) == 1 and "owners-unknown" not in verdicts, (where, verdicts)
    assert len(verdicts["pool-idle"]["threads"]) == 1, (where, verdicts)
    assert doc["exit_status"] == 4, (where, doc["exit_status"], doc["headline"])


def test_each_rank_waits_for_the_other_ranks_in_its_collective_live_and_from_its_core(job):
    s, ranks, live, from_cores = job
    for where, (status, out, err) in [("live", live)] + ([("core", from_cores)] if from_cores else []):
        tree = harness.validated_tree(json.loads(out))
        for rank, r in ranks.items():
            _check_rank(_process(tree, r["pid"]), r, s.truth["world_size"], "%s rank %d" % (where, rank))


def _check_diverged(doc, s, ranks):
    """The tree names the diverged rank first, as a hang (5) and no deadlock."""
    odd = ranks[s.truth["odd_rank"]]
    others = sorted((r for r in ranks.values() if r["rank"] != odd["rank"]), key=lambda r: r["rank"])
    (v,) = [v for v in doc["verdicts"] if v["kind"] == "collective-mismatch"]
    assert (v["pid"], v["threads"], v["facts"]["odd"]) == (odd["pid"], [odd["tid"]], [odd["pid"]]), v
    assert v["facts"]["world_size"] == s.truth["world_size"] and v["facts"]["confidence"] == "likely", v
    found = "rank %d (PID %d) waits in %s while ranks %s (PIDs %s) wait in %s" % (
        odd["rank"], odd["pid"], odd["collective"], ", ".join(str(r["rank"]) for r in others),
        ", ".join(str(r["pid"]) for r in others), others[0]["collective"])
    assert doc["headline"] == "Hung without a deadlock: %s." % found, doc["headline"]
    assert v["text"].startswith("the ranks of one torch.distributed job wait in different collectives: " + found)
    assert doc["exit_status"] == 5 and doc["deadlocks"] == [], doc


def test_the_tree_over_the_launcher_names_the_diverged_rank_first(job):
    s, ranks, (status, out, err), _ = job
    doc = harness.validated_tree(json.loads(out))
    pids = {p["target"]["pid"] for p in doc["processes"] if "target" in p}
    assert pids >= {s.pid} | {r["pid"] for r in ranks.values()}, pids
    _check_diverged(doc, s, ranks)
    assert status == 5, err
    # AND the resource tracker idling on its pipe (written by the launcher and the ranks) is no stall
    assert doc["stalls"] == [], doc["stalls"]


def test_the_cores_of_the_ranks_name_the_diverged_rank_too(job):
    s, ranks, _, from_cores = job
    if from_cores is None:
        pytest.skip("the ranks' cores are read on %s's torch only" % CORES_ON)
    status, out, err = from_cores
    _check_diverged(harness.validated_tree(json.loads(out)), s, ranks)
    assert status == 5, err

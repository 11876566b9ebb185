"""Case 3: a training job stopped while saving a checkpoint.  With PyTorch
from Debian, no debug symbols: every thread that runs Python has its stack
(the main thread's inside torch.save's zip writer), the main thread's write
names the pipe and the process that holds its other end, the metrics thread
is named as waiting in threading.Condition.wait, and libgomp's and torch's
pool threads are listed as idle workers running no Python, live and from a
core; the tree names the stall (the only reader of the pipe sleeps)."""
import importlib.util
import json
import os

import pytest

import harness

PY = "/usr/bin/python3.11"


def test_a_job_stuck_in_torch_save_shows_every_threads_python_stack_and_what_each_waits_for(scenario):
    if importlib.util.find_spec("torch") is None:  # the tests run on the Python the scenario uses
        pytest.skip("torch is not installed for %s (apt-get install python3-torch)" % PY)
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "training_save.py")], ready_timeout=120)
    roles = {t["role"]: t for t in s.truth["threads"]}
    main, metrics = roles["main"], roles["metrics"]
    for where in ("live", "core"):
        target = {"pid": s.pid} if where == "live" else {"executable": PY, "core": s.gcore()}
        report = harness.report_json(**target)
        threads = {t["tid"]: t for t in report["threads"]}
        # THEN the main thread's stack runs from torch.save's own frames out to the job's
        got = threads[main["tid"]]["python_frames"]
        outer = s.truth["main_outer"]
        assert [(f["file"], f["line"]) for f in got[-len(outer):]] == [(f["file"], f["line"]) for f in outer], where
        assert any(f["file"].endswith("torch/serialization.py") for f in got[:-len(outer)]), (where, got)
        # AND it sleeps in write(2) on the pipe; live, the process holding the other end is named
        blocked = threads[main["tid"]]["blocked_on"]
        assert blocked["kind"] == "syscall" and blocked["syscall"]["name"] == "write", (where, blocked)
        if where == "live":
            holders = [h["pid"] for h in blocked["syscall"]["object"]["holders"]]
            assert holders == [s.truth["uploader"]], (where, blocked)
        # AND the metrics thread waits in Condition.wait, named as such, at its recorded line
        m = threads[metrics["tid"]]
        assert m["blocked_on"]["kind"] == "py-condition", (where, m["blocked_on"])
        assert (m["python_frames"][1]["file"], m["python_frames"][1]["line"]) == \
            (metrics["stack"][0]["file"], metrics["stack"][0]["line"]), where
        # AND the threads that run no Python (libgomp's, torch's pool) are listed without a Python stack,
        # as idle pool workers, and the metrics thread, waiting to be notified with no thread waiting on
        # it, as idle: no wait is one whose owner is unknown
        for tid in s.truth["native_only_threads"]:
            assert threads[tid]["python_frames"] == [] and threads[tid]["native_frames"], (where, tid)
        verdicts = {v["kind"]: v for v in report["verdicts"]}
        assert sorted(verdicts["pool-idle"]["threads"]) == s.truth["native_only_threads"], (where, verdicts)
        assert verdicts["idle"]["threads"] == [metrics["tid"]] and "owners-unknown" not in verdicts, (where, verdicts)
        # AND nobody holds the GIL: every Python thread released it to wait
        assert report["gil"]["holder_tid"] is None, where
    # AND the tree names the stall: the main thread's write, whose only reader (the uploader) sleeps
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    tree = harness.validated_tree(json.loads(out))
    (stall,) = [st for st in tree["stalls"] if st["waiter"] == main["tid"]]
    assert stall["syscall"] == "write" and [h["pid"] for h in stall["holders"]] == [s.truth["uploader"]], stall
    assert [t["syscall"] for t in stall["holders"][0]["threads"]] == ["clock_nanosleep"], stall

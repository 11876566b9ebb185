"""A multiprocessing.Pool whose worker was killed while running a task
(SIGKILL, as the OOM killer does): Pool.map waits for ever, and nothing is
a cycle.  The idle plumbing — the result handler reading the result pipe,
the workers reading the task pipe, whose write end any parent thread may
write to — is no deadlock: the parent's task handler, waiting for tasks, is
one of those threads, and no cycle runs through it."""
import json
import os

import harness

PY = "/usr/bin/python3.11"


def test_a_pools_idle_plumbing_is_no_deadlock_when_a_worker_died_with_its_task(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "pool_worker_killed.py")])
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    doc = harness.validated_tree(json.loads(out))
    assert doc["deadlocks"] == [], doc["deadlocks"]
    pids = {p["target"]["pid"] if "target" in p else p["pid"] for p in doc["processes"]}
    assert pids >= {s.pid} | set(s.truth["workers"]) and s.truth["killed"] not in pids
    # a hang all the same, never an all-clear
    assert status == doc["exit_status"] == 5, err

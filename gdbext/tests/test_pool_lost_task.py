"""A multiprocessing.Pool whose worker was killed while running a task
(SIGKILL, as the OOM killer does): Pool.map waits for ever, and nothing is
a cycle.  The idle plumbing — the result handler reading the result pipe,
the workers reading the task pipe, whose write end any parent thread may
write to — is no deadlock: the parent's task handler, waiting for tasks, is
one of those threads, and no cycle runs through it.  What is said instead:
the awaited task is in no worker's hands (pool-task-lost, likely); never
of a pool whose workers are inside their tasks.  Live and from the cores
`pyhang gcore --tree` writes; the parent's core gdb writes, which records no
fd table, never an all-clear.  On Debian's 3.11 and unstable's 3.14 in its
root.  A healthy pool between tasks (both interpreters too) is no problem anywhere: its workers'
reports, its parent's and the tree's exit 0, live (after a second look too)
and from cores."""
import json
import os

import pytest

import harness

PY = "/usr/bin/python3.11"


def check_lost(s, status, doc, err):
    assert doc["deadlocks"] == [], doc["deadlocks"]
    pids = {p["target"]["pid"] if "target" in p else p["pid"] for p in doc["processes"]}
    assert pids >= {s.pid} | set(s.truth["workers"]) and s.truth["killed"] not in pids
    # a hang all the same, never an all-clear: the task was lost
    assert status == doc["exit_status"] == 5, err
    (v,) = doc["verdicts"]
    main = harness.role_tid(s, "main")
    assert (v["kind"], v["pid"], v["threads"]) == ("pool-task-lost", s.pid, [main]), v
    assert sorted(v["facts"]["workers"]) == sorted(s.truth["workers"]) and v["facts"]["confidence"] == "likely"
    assert v["advice"] and "BrokenProcessPool" in v["advice"]
    assert doc["headline"].startswith("Hung without a deadlock: in PID %d a multiprocessing.Pool task was lost" % s.pid)


@pytest.mark.parametrize("python", harness.interpreter_params_of())
def test_a_pools_idle_plumbing_is_no_deadlock_when_a_worker_died_with_its_task(scenario, python, tmp_path):
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "pool_worker_killed.py")])
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    check_lost(s, status, harness.validated_tree(json.loads(out)), err)
    main = harness.role_tid(s, "main")
    # AND from the cores pyhang gcore --tree writes: the same lost task
    pids = [s.pid] + sorted(s.truth["workers"])
    status, _, err = harness.pyhang_cli("gcore", "--tree", "-p", s.pid, "-o", str(tmp_path / "core"))
    assert status == 0, err
    status, out, err = harness.pyhang_cli("report", "--json", *harness.core_options(python),
                                          *[str(tmp_path / ("core.%d" % pid)) for pid in pids])
    check_lost(s, status, harness.validated_tree(json.loads(out)), err)
    # AND from the parent's core gdb writes (no fd table): its waits on the pool's pipes are not accounted for
    status, core = harness.report_doc(*harness.core_options(python), s.gcore(), python)
    t = next(t for t in core["threads"] if t["tid"] == main)
    assert (t["account"]["state"], status) == ("unaccounted", 4), (t["account"], core["headline"])
    _, text, _ = harness.pyhang_cli("report", "--tree", "-p", s.pid)
    assert text.splitlines()[4].startswith("Pool task lost: in PID %d Thread 1 (LWP %d)" % (s.pid, main)), text


def test_a_pool_whose_workers_are_inside_their_tasks_lost_none(scenario):
    # the workers of fork_pool_lock.py are blocked inside their task (on a lock copied locked)
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "fork_pool_lock.py")])
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    doc = harness.validated_tree(json.loads(out))
    assert doc["verdicts"] == [] and status == 5, err


@pytest.mark.parametrize("python", harness.interpreter_params_of())
def test_a_pool_between_tasks_is_idle_in_every_report_live_and_from_cores(scenario, tmp_path, python):
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "pool_idle.py"), "3"])
    workers = s.truth["workers"]
    harness.wait_processes_parked(workers + [s.pid])
    # THEN each worker, alone, is idle: waiting for its next task (in the task pipe's read, or for its lock,
    # a process-shared semaphore) is what it is for; a second look does not call that "no progress"
    for i, pid in enumerate(workers):
        status, doc = harness.report_doc("-p", pid, look=i == 0)
        (t,) = doc["threads"]
        assert t["account"]["state"] == "idle" and t["account"]["reason"] == "pool-work", t["account"]
        assert status == 0 and doc["headline"] == "No deadlock found.", doc["headline"]
    # AND the parent, whose pool threads wait for results and for workers' exits, and the tree
    status, doc = harness.report_doc("-p", s.pid)
    assert status == 0, [(t["tid"], t["account"]) for t in doc["threads"]]
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    tree = harness.validated_tree(json.loads(out))
    assert (status, tree["stalls"], tree["deadlocks"]) == (0, [], []), tree["headline"]
    # AND from a core of a worker (gdb's: no fd table) and the tree's cores pyhang gcore writes
    status, doc = harness.report_doc(*harness.core_options(python), harness.gcore(workers[0], str(tmp_path)), python)
    assert status == 0, [(t["tid"], t["account"]) for t in doc["threads"]]
    status, _, err = harness.pyhang_cli("gcore", "--tree", "-p", s.pid, "-o", str(tmp_path / "tree"))
    cores = [str(tmp_path / ("tree.%d" % pid)) for pid in [s.pid] + workers]
    assert status == 0, err
    status, out, err = harness.pyhang_cli("report", "--json", *harness.core_options(python), *cores)
    tree = harness.validated_tree(json.loads(out))
    assert status == tree["exit_status"] == 0, tree["headline"]

"""A thread waiting on a concurrent.futures.Future that a ThreadPoolExecutor
worker is running names that worker as what it waits for (certain: the
worker's _WorkItem.run frame's self.future is the very Future), and a
worker asleep in SQLite's busy handler waits for a database lock whose
likely holder is a thread holding a sqlite3.Connection: with the main
thread's open write transaction, a likely deadlock.  Live and from a core,
on Debian 3.11 and pyenv 3.8 and 3.13 (stripped)."""
import json
import os

import pytest

import harness


def params():
    found = dict(harness.interpreters())
    names = ["debian-3.11"] + [n for n in sorted(found) if n.startswith(("pyenv-3.8", "pyenv-3.13", "debian-sid-3.14"))]
    return [pytest.param(found[n], id=n) for n in names if n in found]


@pytest.mark.parametrize("python", params())
def test_a_future_whose_work_item_a_worker_runs_names_that_worker(scenario, python):
    # GIVEN the main thread waiting for a future whose work item a pool worker runs (sqlite3 busy-waits in it)
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "sqlite_future.py")], env=env)
    main, worker = harness.role_tid(s, "main"), harness.role_tid(s, "worker")
    for where, target in (("live", ["-p", s.pid]), ("core", [*harness.core_options(exe), s.gcore(), exe])):
        status, out, err = harness.pyhang_cli("report", "--json", *target)
        doc = harness.validated_report(json.loads(out))
        threads = {t["tid"]: t for t in doc["threads"]}
        b = threads[main]["blocked_on"]
        # THEN its wait names the worker, from the work item itself
        assert (b["kind"], b["address"], b["owners"], b["owner_source"]) == \
            ("py-future", s.truth["future"], [worker], "work-item"), (where, b)
        assert "runs the work item that completes it" in b["detail"], (where, b["detail"])
        assert any(e["waiter"] == main and e["owner"] == worker for e in doc["edges"]), where
        # AND it is no "owner unknown" wait
        unknown = [t for v in doc["verdicts"] if v["kind"] == "owners-unknown" for t in v["threads"]]
        assert main not in unknown
        # AND the worker, asleep in SQLite's busy handler, waits for a database lock: said so, never a plain sleep
        w = threads[worker]["blocked_on"]
        assert (w["kind"], w["confidence"], w["owners"]) == ("sqlite-busy", "likely", []), (where, w)
        assert "busy handler" in w["detail"], (where, w["detail"])
        # AND its likely holder is the thread whose frames hold a sqlite3.Connection: the main thread, which
        # waits for the worker: a likely deadlock, with advice to end the transaction first
        (e,) = [e for e in doc["edges"] if e["waiter"] == worker]
        assert (e["owner"], e["kind"], e["source"]) == (main, "sqlite-busy", "heuristic"), (where, e)
        assert "connection" in [c["name"] for c in e["facts"]["connections"]], (where, e)
        (d,) = doc["deadlocks"]
        assert sorted(d["threads"]) == sorted([main, worker]) and d["confidence"] == "likely", (where, d)
        assert d["advice"].startswith("commit (or roll back) the open transaction"), where
        assert status == doc["exit_status"] == 3, where

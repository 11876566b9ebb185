"""A thread waiting on a concurrent.futures.Future that a ThreadPoolExecutor
worker is running names that worker as what it waits for (certain: the
worker's _WorkItem.run frame's self.future is the very Future), and a
worker asleep in SQLite's busy handler waits for a database lock, live and
from a core, on Debian 3.11 and pyenv 3.8 and 3.13 (stripped)."""
import json
import os

import pytest

import harness


def params():
    found = dict(harness.interpreters(today=False))
    names = ["debian-3.11"] + [n for n in sorted(found) if n.startswith(("pyenv-3.8", "pyenv-3.13"))]
    return [pytest.param(found[n], id=n) for n in names if n in found]


@pytest.mark.parametrize("python", params())
def test_a_future_whose_work_item_a_worker_runs_names_that_worker(scenario, python):
    # GIVEN the main thread waiting for a future whose work item a pool worker runs (sqlite3 busy-waits in it)
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "sqlite_future.py")], env=env)
    main, worker = harness.role_tid(s, "main"), harness.role_tid(s, "worker")
    for where, target in (("live", ["-p", s.pid]), ("core", [s.gcore(), exe])):
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
        # AND the worker, asleep in SQLite's busy handler, waits for a database lock (likely; its holder,
        # a connection with an open write transaction, is not named): said so, never a plain sleep
        w = threads[worker]["blocked_on"]
        assert (w["kind"], w["confidence"], w["owners"]) == ("sqlite-busy", "likely", []), (where, w)
        assert "busy handler" in w["detail"] and worker in unknown, (where, w["detail"])

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

PY = "/usr/bin/python3.11"

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


def starved_params():
    found = dict(harness.interpreters())
    names = ["debian-3.11"] + [n for n in sorted(found) if n.startswith(("pyenv-3.6", "pyenv-3.13", "debian-sid-3.14",
                                                                        "debian-sid-3.15", "debian-trixie-3.13"))]
    return [pytest.param(found[n], id=n) for n in names if n in found]


@pytest.mark.parametrize("mode", ["as_completed", "wait"])
@pytest.mark.parametrize("python", starved_params())
def test_a_thread_in_as_completed_or_wait_on_a_starving_pools_futures_waits_on_the_workers_running_them(scenario, python,
                                                                                                         mode):
    # GIVEN a ThreadPoolExecutor starving itself, and the main thread in concurrent.futures.as_completed (or wait)
    # over the outer futures its two workers run
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "starved_pool.py"), mode], env=env)
    main = harness.role_tid(s, "main")
    workers = [harness.role_tid(s, "worker-%d" % i) for i in (1, 2)]
    outer = sorted(t["outer"] for t in s.truth["threads"] if "outer" in t)
    for where, doc, text in harness.cli_live_and_core_reports(s, exe, text=True):
        threads = {t["tid"]: t for t in doc["threads"]}
        b = threads[main]["blocked_on"]
        # THEN its wait is owned by both workers, read from their work items: no "owner unknown" wait
        assert (b["kind"], sorted(b["owners"]), b["owner_source"]) == ("py-event", sorted(workers), "work-item"), \
            (where, b)
        assert "concurrent.futures.%s waits on it for 2 Futures" % mode in b["detail"], (where, b["detail"])
        assert all("0x%x" % f in b["detail"] for f in outer), (where, b["detail"], outer)
        assert sorted(e["owner"] for e in doc["edges"] if e["waiter"] == main) == sorted(workers), where
        assert not [v for v in doc["verdicts"] if v["kind"] == "owners-unknown"], (where, doc["verdicts"])
        # AND it is blocked on the starving workers, the one finding of the report
        assert threads[main]["account"]["state"] == "blocked" and \
            sorted(threads[main]["account"]["threads"]) == sorted(workers), (where, threads[main]["account"])
        assert [v["kind"] for v in doc["verdicts"]] == ["executor-starvation"], where
        assert doc["exit_status"] == 5 and "Owner unknown" not in text, (where, doc["headline"])


def _gdb_sections(first, commands, pid):
    """The output of each of gdb's `commands`, run in one gdb attached to `pid` after `first`, between markers."""
    marked = list(first)
    for i, c in enumerate(commands):
        marked += ["echo %s-%d\\n" % (harness.BEGIN, i), c]
    out = harness.run_gdb(marked + ["echo %s-%d\\n" % (harness.BEGIN, len(commands))], pid=pid)
    assert "Traceback (most recent call last)" not in out, out[-4000:]
    return [out.split("%s-%d\n" % (harness.BEGIN, i), 1)[1].split("%s-%d\n" % (harness.BEGIN, i + 1), 1)[0]
            for i in range(len(commands))]


def _select(tid):
    return 'python gdb.execute("thread %%d" %% next(t.num for t in gdb.selected_inferior().threads() ' \
           'if t.ptid[1] == %d), to_string=True)' % tid


def test_gdbs_commands_and_the_command_lines_name_the_futures_worker_alike_from_one_analysis_a_stop(scenario):
    # GIVEN the main thread waiting for a future whose work item a pool worker runs
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "sqlite_future.py")])
    main, worker = harness.role_tid(s, "main"), harness.role_tid(s, "worker")
    # WHEN gdb's lock-owner and py-bt run on the main thread, `thread apply all lock-owner` on every thread
    # (its analyses counted), and the command line's lock-owner and py-bt on the same process
    count = 'python import pyhang_gdb.facts as F; F.made = [0]; F.plain = F.report; ' \
            'F.report = lambda *a, **k: (F.made.__setitem__(0, F.made[0] + 1), F.plain(*a, **k))[1]'
    gdb_owner, gdb_bt, apply_all, made, gil = _gdb_sections(
        [count, _select(main)], ["lock-owner", "py-bt", "thread apply all lock-owner",
         "python print(F.made[0])", "gil-holder"], s.pid)
    _, cli_owner, _ = harness.pyhang_cli("lock-owner", "-p", s.pid)
    _, cli_bt, _ = harness.pyhang_cli("py-bt", "-p", s.pid)
    _, cli_gil, _ = harness.pyhang_cli("gil-holder", "-p", s.pid)
    # THEN gdb's line for the main thread is the command line's, naming the worker from its work item
    label = "(LWP %d)" % main
    (cli_line,) = [l for l in cli_owner.splitlines() if l.startswith("Thread ") and label in l.split(" waits")[0]]
    assert gdb_owner.strip() == cli_line, (gdb_owner, cli_owner)
    assert "(LWP %d)" % worker in cli_line and "runs the work item that completes it" in cli_line, cli_line
    # AND under `thread apply all` the same words come under gdb's header, unnamed, from one analysis for them all
    assert cli_line.split(" ", 4)[4] in apply_all, apply_all
    assert made.strip() == "1", made
    # AND py-bt of the main thread is the command line's block of it, and gil-holder the same text
    (cli_block,) = [b for b in cli_bt.strip().split("\n\n") if b.startswith("Thread ") and label in b.splitlines()[0]]
    assert gdb_bt.strip() == cli_block.strip(), (gdb_bt, cli_bt)
    assert "future.result()" in cli_block, cli_block
    assert gil.strip() == "\n".join(l for l in cli_gil.strip().splitlines() if not l.startswith("warning: ")), \
        (gil, cli_gil)

"""The closed-world account: every thread is in one class (running, idle,
blocked, deadlocked, hung, elsewhere, unaccounted), and the all-clear
(exit 0, "No deadlock found.") is given only when none is in the last four.
A thread waiting for a lock it holds itself is a one-thread deadlock.  Each
live and from a core, through the command line, against what the scenario
recorded about itself."""
import json
import os

import pytest

import harness

PY = "/usr/bin/python3.11"


def self_deadlock_interpreters():
    """Debian's 3.11, pyenv's 3.8 and 3.12 (stripped) and Debian unstable's 3.14 in its root."""
    found = dict(harness.interpreters())
    return [pytest.param(p, id=n) for n, p in sorted(found.items())
            if n == "debian-3.11" or n.startswith(("pyenv-3.8.", "pyenv-3.12.", "debian-sid-3.14"))]


def accounts(doc):
    return {t["tid"]: t["account"] for t in doc["threads"]}


@pytest.mark.parametrize("python", self_deadlock_interpreters())
@pytest.mark.parametrize("mode", ["with", "signal"])
def test_a_thread_waiting_for_a_lock_it_acquired_itself_is_a_one_thread_deadlock(scenario, python, mode):
    # GIVEN a thread that holds a threading.Lock further down its own stack (inside `with` in an outer
    # method, or in the frame a signal handler interrupted) and takes it again
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "self_deadlock.py"), mode], env=env)
    waiter = harness.role_tid(s, "waits-for-itself")
    held = s.truth["held_at"]
    for where, doc, text in harness.cli_live_and_core_reports(s, exe, text=True):
        # THEN one likely deadlock of that one thread, its edge to itself naming the frame that holds it
        assert doc["exit_status"] == 3, (where, doc["headline"])
        (d,) = doc["deadlocks"]
        assert d["threads"] == [waiter] and d["confidence"] == "likely", (where, d)
        (e,) = d["edges"]
        assert (e["waiter"], e["owner"], e["kind"], e["address"]) == (waiter, waiter, "py-lock", s.truth["lock"])
        assert e["facts"]["self"] is True
        site = e["facts"]["references"]
        assert (site["function"].split(".")[-1], site["line"]) == (held["function"], held["line"]), (where, site)
        assert accounts(doc)[waiter]["state"] == "deadlocked"
        assert "Found one deadlock (likely): a thread waits for itself:" in text, (where, text[:800])
        held_line = 'File "%s", line %d' % (os.path.join(harness.SCENARIOS, "self_deadlock.py"), held["line"])
        (t,) = [t for t in doc["threads"] if t["tid"] == waiter]
        if mode == "with":
            # AND the text says it waits for itself, where it took the lock, and that a Lock is not re-entrant
            assert "which it acquired itself at " + held_line in text, (where, text[:1500])
            assert "a Lock is not re-entrant" in text and "threading.RLock" in d["advice"]
            assert "handler" not in e["facts"] and not [f for f in t["python_frames"] if "signal" in f]
            continue
        # AND a signal handler is named as one, with its signal, and the frame it interrupted, which holds the lock
        handler = e["facts"]["handler"]
        assert (handler["function"].split(".")[-1], handler["signal"]) == (s.truth["handler"], s.truth["signal"])
        interrupted = e["facts"]["interrupted"]
        assert (interrupted["function"].split(".")[-1], interrupted["line"]) == (held["function"], held["line"])
        assert [f["signal"] for f in t["python_frames"] if "signal" in f] == [s.truth["signal"]]
        assert ("in its signal handler %s (for signal %d (SIGUSR1)), which interrupted %s, in %s while that frame "
                "holds it" % (handler["function"], s.truth["signal"], held_line, interrupted["function"])) in text, \
            (where, text[:1500])
        assert "[signal handler for signal %d (SIGUSR1)]" % s.truth["signal"] in text
        assert d["advice"].startswith("a signal handler runs between two lines of the code it interrupts")


def test_a_thread_waiting_for_the_mutex_it_holds_is_a_certain_one_thread_deadlock(scenario):
    # GIVEN a C thread that locks a normal mutex twice
    prog = harness.fixture_path("prog_locks")
    s = scenario([prog, "-", "mutex-self"])
    (truth,) = s.truth["records"]
    for where, doc, text in harness.cli_live_and_core_reports(s, prog, text=True):
        # THEN its owner word names the waiter: a certain deadlock of one thread
        (d,) = doc["deadlocks"]
        assert d["threads"] == [truth["waiter"]] and d["confidence"] == "certain", (where, d)
        (e,) = d["edges"]
        assert (e["owner"], e["kind"], e["address"], e["source"]) == (truth["waiter"], "mutex", truth["address"],
                                                                       "lock-word")
        assert "whose owner word names this thread itself: a normal mutex is not re-entrant" in text, where
        assert doc["exit_status"] == 3


def today_interpreters():
    """Debian's 3.11 and today's Debian interpreters in their roots (trixie's 3.13, unstable's 3.14 and 3.15)."""
    return [pytest.param(p, id=n) for n, p in sorted(dict(harness.interpreters()).items())
            if n.startswith("debian-")]


@pytest.mark.parametrize("python", today_interpreters())
def test_an_idle_server_is_accounted_for_and_gets_the_all_clear(scenario, python):
    # GIVEN a server between requests: a selector loop, accept(), idle pool workers, a queue consumer,
    # a stop event, a housekeeping sleep
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "idle_server.py")], env=env)
    # (on unstable's 3.14 in its root also from the core pyhang gcore writes, whose record of /proc says what the
    # listening sockets and the selector's fds are: the all-clear still)
    for where, doc, text in harness.cli_live_and_core_reports(s, exe, text=True, recorded=harness.is_sid_314(python)):
        # THEN every thread is idle, and the report is the all-clear
        got = accounts(doc)
        assert {t["tid"] for t in s.truth["threads"]} == set(got), where
        assert {tid: a["state"] for tid, a in got.items()} == {t["tid"]: "idle" for t in s.truth["threads"]}, \
            (where, got)
        assert got[harness.role_tid(s, "main")]["reason"] == "selector"
        assert got[harness.role_tid(s, "acceptor")]["reason"] == "listener"
        assert got[harness.role_tid(s, "ticker")]["reason"] == "timed"
        assert doc["exit_status"] == 0 and doc["headline"] == "No deadlock found.", (where, doc["headline"])
        assert doc["account"] == {"idle": len(s.truth["threads"])}
        assert "Every thread accounted for: %d idle" % len(s.truth["threads"]) in text, where


def test_threads_writing_into_a_pipe_only_their_process_holds_are_never_an_all_clear(scenario):
    # GIVEN threads blocked writing to pipes whose read ends only their own process holds, nobody reading
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "py_buffered.py"), "threads"])
    writers = [harness.role_tid(s, "stdout-holder"), harness.role_tid(s, "log-holder")]
    for where, doc in harness.cli_live_and_core_reports(s, PY):
        got = accounts(doc)
        # THEN each writer is unaccounted: live because only this process holds the other end, from a core
        # because a core records no fd table; and the report exits 4, never 0
        want = "own-process" if where == "live" else "no-fd-table"
        assert {tid: (got[tid]["state"], got[tid]["reason"]) for tid in writers} == \
            {tid: ("unaccounted", want) for tid in writers}, (where, got)
        (v,) = [v for v in doc["verdicts"] if v["kind"] == "unaccounted"]
        assert sorted(v["threads"]) == sorted(writers) and all(w["call"] == "write" for w in v["facts"]["waits"])
        assert doc["exit_status"] == 4 and doc["headline"].startswith("Not accounted for: "), (where, doc["headline"])


def test_the_json_account_counts_every_thread_once(scenario):
    # GIVEN threads in many states (py_objects: a starving pool, waits whose owners pyhang cannot name, idle)
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "py_objects.py")])
    status, out, _ = harness.pyhang_cli("report", "--json", "-p", s.pid)
    doc = harness.validated_report(json.loads(out))
    # THEN each thread has one class, the counts add up to the threads, and the starving workers are hung
    assert sum(doc["account"].values()) == len(doc["threads"])
    for t in doc["threads"]:
        assert t["account"]["state"] in ("running", "idle", "blocked", "deadlocked", "hung", "elsewhere",
                                         "unaccounted"), t
    for tid in (harness.role_tid(s, "pool-worker-1"), harness.role_tid(s, "pool-worker-2")):
        assert accounts(doc)[tid] == {"state": "hung", "reason": "finding", "finding": "executor-starvation",
                                      "threads": [], "pids": []}
    assert status == doc["exit_status"] == 5

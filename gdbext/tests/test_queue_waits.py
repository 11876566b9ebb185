"""Queue waits named for what they serve: a Queue.join whose consumers all
idle in get() with a task unfinished (nothing will call task_done()) is a
hang; a join while a consumer still holds an item waits on that consumer;
a put to a full queue no other thread reaches is a hang.  Live and from a
core, against what the scenario recorded about itself."""
import os

import pytest

import harness


def queue_interpreters():
    """Debian's 3.11, pyenv's 3.6 (co_name frames) and Debian unstable's 3.14 in its root."""
    found = dict(harness.interpreters())
    return [pytest.param(p, id=n) for n, p in sorted(found.items())
            if n == "debian-3.11" or n.startswith(("pyenv-3.6.", "debian-sid-3.14"))]


def start(scenario, python, mode):
    exe, env = harness.stripped_interpreter(python)
    return exe, scenario([exe, "-u", os.path.join(harness.SCENARIOS, "queue_join.py"), mode], env=env)


def threads(doc):
    return {t["tid"]: t for t in doc["threads"]}


@pytest.mark.parametrize("python", queue_interpreters())
def test_a_join_whose_consumers_all_wait_in_get_with_a_task_unfinished_is_a_hang(scenario, python):
    # GIVEN a Queue.join with one unfinished task, the queue empty, both consumers back in get()
    exe, s = start(scenario, python, "skipped")
    joiner = harness.role_tid(s, "joiner")
    consumers = sorted(t["tid"] for t in s.truth["threads"] if t["role"].startswith("consumer"))
    for where, doc in harness.cli_live_and_core_reports(s, exe):
        t = threads(doc)[joiner]
        # THEN the joiner's wait is the join of that queue, with its count
        b = t["blocked_on"]
        assert (b["kind"], b["address"]) == ("py-queue-join", s.truth["queue"]), (where, b)
        assert "1 unfinished" in b["detail"], (where, b["detail"])
        # AND nothing will call task_done(): a hang, naming the consumers idle in get()
        (v,) = [v for v in doc["verdicts"] if v["kind"] == "nothing-can-wake"]
        assert v["threads"] == [joiner] and v["facts"]["kind"] == "py-queue-join", (where, v)
        assert sorted(v["facts"]["consumers"]) == consumers and v["facts"]["unfinished"] == s.truth["unfinished"]
        assert "its task_done() never called" in v["text"] and "task_done()" in v["advice"]
        assert t["account"]["state"] == "hung"
        # AND the join is the module's own code: the interpreter is not exiting
        assert all(x["exiting"] is None for x in doc["threads"]), where
        assert doc["exit_status"] == 5 and doc["headline"] == "Hung without a deadlock: a Queue.join nothing will " \
                                                              "finish.", (where, doc["headline"])


def test_a_join_while_a_consumer_holds_an_item_waits_on_that_consumer(scenario):
    # GIVEN a Queue.join while one consumer still works on its item (waiting on an Event nothing sets yet)
    exe, s = start(scenario, "/usr/bin/python3.11", "busy")
    joiner = harness.role_tid(s, "joiner")
    for where, doc in harness.cli_live_and_core_reports(s, exe, look=True):
        got = threads(doc)
        busy = [tid for tid, t in got.items() if (t["blocked_on"] or {}).get("kind") == "py-event"]
        assert len(busy) == 1, (where, busy)
        # THEN the join is no hang of its own: it waits (likely) on the consumer that can still call task_done()
        assert not [v for v in doc["verdicts"] if v["kind"] == "nothing-can-wake"], where
        (e,) = [e for e in doc["edges"] if e["waiter"] == joiner]
        assert (e["owner"], e["kind"], e["source"]) == (busy[0], "py-queue-join", "heuristic"), (where, e)
        assert got[joiner]["account"] == {"state": "blocked", "reason": "owner", "finding": None,
                                          "threads": busy, "pids": []}
        # AND what is wrong is that consumer's own wait, never an all-clear: from the core one look, its owner
        # unknown (4); live, the second look saw it and everything that could set its Event not move (5)
        want = ("hung", 5) if where == "live" else ("unaccounted", 4)
        assert (got[busy[0]]["account"]["state"], doc["exit_status"]) == want, where


@pytest.mark.parametrize("python", queue_interpreters())
def test_a_put_to_a_full_queue_no_other_thread_reaches_is_a_hang(scenario, python):
    exe, s = start(scenario, python, "full")
    producer = harness.role_tid(s, "producer")
    for where, doc in harness.cli_live_and_core_reports(s, exe):
        (v,) = [v for v in doc["verdicts"] if v["kind"] == "nothing-can-wake"]
        assert v["threads"] == [producer] and v["facts"]["kind"] == "py-queue-put", (where, v)
        assert v["facts"]["address"] == s.truth["queue"] and v["facts"]["length"] == s.truth["length"] == 1
        assert doc["exit_status"] == 5 and "a Queue.put nothing can drain" in doc["headline"], where


@pytest.mark.parametrize("python", queue_interpreters())
def test_a_join_in_an_atexit_callback_is_said_to_keep_the_exiting_process_from_ending(scenario, python):
    # GIVEN the same join, made by an atexit callback once the module's code has returned and
    # threading._shutdown is done (the consumers are daemon threads)
    exe, s = start(scenario, python, "atexit")
    joiner = harness.role_tid(s, "joiner")
    for where, doc, text in harness.cli_live_and_core_reports(s, exe, text=True):
        got = threads(doc)
        # THEN the joiner is the thread that runs the interpreter's exit, past threading._shutdown; no other is
        assert {tid: t["exiting"] for tid, t in got.items()} == {tid: "atexit" if tid == joiner else None
                                                                 for tid in got}, where
        # AND the hang is still the join's, and the text says why the process does not end, naming the callback
        assert doc["exit_status"] == 5 and [v["threads"] for v in doc["verdicts"] if v["kind"] == "nothing-can-wake"] \
            == [[joiner]], (where, doc["headline"])
        (line,) = [l for l in text.splitlines() if l.startswith("Exiting: ")]
        assert "runs the interpreter's exit past threading._shutdown, the atexit callbacks" in line, line
        assert "here %s (File \"%s\"" % (s.truth["callback"], os.path.join(harness.SCENARIOS, "queue_join.py")) in line

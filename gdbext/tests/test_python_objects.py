"""Waits on Python-level objects are named as such, not as the lock or
condition below them — Queue.get/put with the queue's size, Semaphore with
its value, Event, Barrier, Future with its state — and an import waiting
for another thread's module lock names that thread, on every version, live
and from the core; a ThreadPoolExecutor whose every worker waits for a
pending future is starved."""
import os

import pytest

import harness

KINDS = {
    "queue-getter": "py-queue-get",
    "queue-putter": "py-queue-put",
    "sem-waiter": "py-semaphore",
    "event-waiter": "py-event",
    "barrier-waiter": "py-barrier",
    "future-waiter": "py-future",
}
# %s: the object's address and the global naming it
DETAILS = {
    "queue-getter": "waits to get from queue.Queue %s: empty (maxsize unbounded)",
    "queue-putter": "waits to put to queue.Queue %s: 1 item (maxsize 1)",
    "sem-waiter": "waits to acquire threading.Semaphore %s: value 0",
    "event-waiter": "waits for threading.Event %s to be set: nobody has set it",
    "barrier-waiter": "waits at threading.Barrier %s: 1 of 3 parties are waiting",
    "future-waiter": "waits for the result of concurrent.futures.Future %s: it is PENDING",
}


# The global of py_objects.py each thread's object is.
GLOBALS = {"queue-getter": "EMPTY", "queue-putter": "FULL", "sem-waiter": "SEM", "event-waiter": "EVENT",
           "barrier-waiter": "BARRIER", "future-waiter": "FUTURE"}


@pytest.mark.parametrize("python", harness.interpreter_params())
def test_python_level_waits_are_named_with_their_objects_state(scenario, python):
    # GIVEN threads blocked in Queue.get/put, Semaphore, Event, Barrier, Future, and an import
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "py_objects.py")], env=env)
    truth = {t["role"]: t for t in s.truth["threads"]}
    for where, report in (("live", harness.report_json(pid=s.pid)),
                          ("core", harness.report_json(executable=exe, core=s.gcore()))):
        threads = {t["tid"]: t for t in report["threads"]}
        # THEN each names the Python object it waits on, with its state, and no owner is invented
        for role, kind in KINDS.items():
            b = threads[truth[role]["tid"]]["blocked_on"]
            assert b["kind"] == kind and b["address"] == truth[role]["object_id"], (where, role, b)
            what = "0x%x (__main__.%s)" % (truth[role]["object_id"], GLOBALS[role])
            assert b["detail"].startswith(DETAILS[role] % what), (where, role, b["detail"])
            assert b["owners"] == [], (where, role)
            assert b["name"] == "__main__." + GLOBALS[role], (where, role, b["name"])
        # AND the import waits for the module lock its importer holds: a certain owner
        b = threads[truth["import-waiter"]["tid"]]["blocked_on"]
        assert b["kind"] == "py-import-lock" and b["owners"] == [truth["importer"]["tid"]], (where, b)
        assert b["owner_source"] == "lock-word" and "'%s'" % s.truth["module"] in b["detail"], (where, b)
        # AND the getter of a queue that no other thread reaches from its frames can be woken by nothing
        # in this process: a likely verdict with its evidence (EMPTY is a global: never certain)
        (n,) = [v for v in report["verdicts"] if v["kind"] == "nothing-can-wake" and v["facts"]["kind"] == "py-queue-get"]
        getter = truth["queue-getter"]["tid"]
        assert n["threads"] == [getter] and n["facts"]["address"] == truth["queue-getter"]["object_id"], (where, n)
        assert n["facts"]["referenced_by"] == [getter] and n["facts"]["confidence"] == "likely", (where, n)
        assert "nothing in this process can wake it [likely" in n["text"] and "__main__.EMPTY" in n["text"], n
        # AND the pool whose two workers both wait for futures no worker is free to run is starved: likely
        workers = [truth["pool-worker-%d" % i]["tid"] for i in (1, 2)]
        for i, w in enumerate(workers, 1):
            b = threads[w]["blocked_on"]
            assert b["kind"] == "py-future" and b["address"] == truth["pool-worker-%d" % i]["object_id"], (where, b)
        (st,) = [v for v in report["verdicts"] if v["kind"] == "executor-starvation"]
        assert sorted(st["threads"]) == sorted(workers) and st["facts"]["work_queue"] == s.truth["pool_queue"], st
        assert st["facts"]["confidence"] == "likely" and "starvation" in st["text"], (where, st)
        # AND the threads nobody is known to wake are one verdict, never an all-clear; the getter is
        # the nothing-can-wake verdict's, and the event waiter, which no thread waits on, is idle
        (v,) = [v for v in report["verdicts"] if v["kind"] == "owners-unknown"]
        unknown = {truth[r]["tid"] for r in KINDS if r not in ("queue-getter", "queue-putter", "event-waiter")}
        assert unknown <= set(v["threads"]) and getter not in v["threads"], (where, v)
        # (the putter to the full queue no other thread reaches can be drained by nothing: a hang of its own)
        (p,) = [v for v in report["verdicts"] if v["kind"] == "nothing-can-wake" and v["facts"]["kind"] == "py-queue-put"]
        assert p["threads"] == [truth["queue-putter"]["tid"]], (where, p)
        (idle,) = [v for v in report["verdicts"] if v["kind"] == "idle"]
        assert idle["threads"] == [truth["event-waiter"]["tid"]], (where, idle)

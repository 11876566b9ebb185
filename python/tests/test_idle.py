"""Idle threads (analysis.idle): a thread waiting for what any thread may
give, that no thread waits on, is idle — never the main thread, never one
another thread waits on, never one another verdict explains; an executor's
own work queue is idle plumbing, not a Queue nothing can fill.  On the
snapshot of testdata/scenarios/py_objects.py and edited copies."""
from pyhang.model.waits import PoolWorker
from test_analysis import recorded, replay, role


def verdict(rep, kind):
    found = [v for v in rep["verdicts"] if v["kind"] == kind]
    return found[0] if found else None


def test_an_event_waiter_nothing_waits_on_is_idle_and_not_of_unknown_owner():
    doc = recorded("python_objects")
    _, rep = replay(doc)
    waiter = role(doc, "event-waiter")
    assert verdict(rep, "idle")["threads"] == [waiter]
    assert waiter not in verdict(rep, "owners-unknown")["threads"]
    (w,) = verdict(rep, "idle")["facts"]["waits"]
    assert w["kind"] == "py-event" and w["name"] == "__main__.EVENT" and w["work_queue"] is None


def test_a_thread_another_waits_on_is_never_idle():
    # the importer waits on an Event too, but holds the module lock the import-waiter waits for
    doc = recorded("python_objects")
    _, rep = replay(doc)
    importer = role(doc, "importer")
    assert importer not in verdict(rep, "idle")["threads"]
    assert importer in verdict(rep, "owners-unknown")["threads"]


def test_the_main_thread_waiting_is_never_idle():
    doc = recorded("python_objects")
    waiter = role(doc, "event-waiter")

    def as_main(snap):
        snap.target.pid = waiter   # the event waiter is now the process's main thread
    rep = replay(doc, as_main)[1]
    assert verdict(rep, "idle") is None
    assert waiter in verdict(rep, "owners-unknown")["threads"]


def test_workers_waiting_on_their_own_pools_queue_are_idle_not_a_queue_nothing_can_fill():
    # GIVEN the queue getter made a ThreadPoolExecutor worker of that very queue (a queue.Queue,
    # as pools had before 3.7)
    doc = recorded("python_objects")
    getter = role(doc, "queue-getter")
    queue = next(t["object_id"] for t in doc["truth"]["threads"] if t["role"] == "queue-getter")

    def pool_worker(snap):
        next(t for t in snap.threads if t.tid == getter).pool_worker = PoolWorker(work_queue=queue)
    rep = replay(doc, pool_worker)[1]
    # THEN no thread is said to wait on a queue nothing can fill: it waits for work
    assert [v for v in rep["verdicts"] if v["kind"] == "nothing-can-wake" and v["facts"]["kind"] == "py-queue-get"] \
        == []
    idle = verdict(rep, "idle")
    assert getter in idle["threads"]
    assert next(w for w in idle["facts"]["waits"] if w["tid"] == getter)["work_queue"] == queue
    assert "the work queue 0x%x of their ThreadPoolExecutor" % queue in idle["text"]


def test_verdicts_come_most_serious_first_and_hangs_carry_advice():
    doc = recorded("python_objects")
    _, rep = replay(doc)
    assert [v["kind"] for v in rep["verdicts"]] == ["executor-starvation", "nothing-can-wake", "nothing-can-wake",
                                                   "owners-unknown", "idle"]
    assert all(v["advice"] for v in rep["verdicts"][:4]) and rep["verdicts"][4]["advice"] is None
    assert rep["headline"] == "Hung without a deadlock: a ThreadPoolExecutor starves itself; a Queue.get nothing " \
                              "can fill; a Queue.put nothing can drain."

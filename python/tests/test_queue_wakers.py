"""A Queue.get on an empty queue (or a Queue.put on a full one) that no
other thread reaches from its Python frames is a "nothing-can-wake" verdict, and a ThreadPoolExecutor
whose every worker waits for a pending future an "executor-starvation"
one: likely, never certain; on the snapshot of
testdata/scenarios/py_objects.py and edited copies."""
import copy

from test_analysis import recorded, replay, role


def getter_api(snap, doc):
    return next(t for t in snap.threads if t.tid == role(doc, "queue-getter")).python_api


def nothing_can_wake(rep, kind="py-queue-get"):
    return [v for v in rep["verdicts"] if v["kind"] == "nothing-can-wake" and v["facts"]["kind"] == kind]


def test_a_getter_of_a_queue_no_other_thread_reaches_can_be_woken_by_nothing_likely():
    doc = recorded("python_objects")
    _, rep = replay(doc)
    getter = role(doc, "queue-getter")
    (v,) = nothing_can_wake(rep)
    assert v["threads"] == [getter] and v["facts"]["confidence"] == "likely" and v["facts"]["complete"] is True
    assert v["facts"]["address"] == next(t["object_id"] for t in doc["truth"]["threads"] if t["role"] == "queue-getter")
    assert "nothing in this process can wake it [likely: a thread may still reach it through a global" in v["text"]


def test_a_queue_another_thread_reaches_is_no_such_verdict():
    doc = recorded("python_objects")

    def producer(snap):
        getter_api(snap, doc).referenced_by.append(role(doc, "sem-waiter"))
    assert not nothing_can_wake(replay(doc, producer)[1])


def test_threads_that_only_wait_to_get_from_the_same_queue_cannot_wake_each_other():
    doc = recorded("python_objects")
    getter, other = role(doc, "queue-getter"), role(doc, "event-waiter")

    def second_getter(snap):
        api = getter_api(snap, doc)
        api.referenced_by.append(other)
        t = next(t for t in snap.threads if t.tid == other)
        t.python_api, t.python_lock = copy.deepcopy(api), next(x for x in snap.threads if x.tid == getter).python_lock
    (v,) = nothing_can_wake(replay(doc, second_getter)[1])
    assert sorted(v["threads"]) == sorted([getter, other]) and "wake them" in v["text"]


def test_a_queue_with_items_or_references_never_read_is_no_such_verdict():
    doc = recorded("python_objects")

    def not_read(snap):
        getter_api(snap, doc).referenced_by = None
    assert not nothing_can_wake(replay(doc, not_read)[1])

    def an_item(snap):
        getter_api(snap, doc).attributes["queue"].length = 1
    assert not nothing_can_wake(replay(doc, an_item)[1])

    def incomplete(snap):
        getter_api(snap, doc).references_complete = False
    (v,) = nothing_can_wake(replay(doc, incomplete)[1])
    assert v["facts"]["complete"] is False and "not every frame could be read" in v["text"]


def starvation(rep):
    return [v for v in rep["verdicts"] if v["kind"] == "executor-starvation"]


def test_a_pool_whose_every_worker_waits_for_a_pending_future_is_starved_likely():
    doc = recorded("python_objects")
    workers = sorted(role(doc, "pool-worker-%d" % i) for i in (1, 2))
    (v,) = starvation(replay(doc)[1])
    assert sorted(v["threads"]) == workers and v["facts"]["work_queue"] == doc["truth"]["pool_queue"]
    assert v["facts"]["confidence"] == "likely" and "starvation" in v["text"]


def test_a_pool_with_a_worker_not_waiting_for_a_future_is_not_starved():
    doc = recorded("python_objects")
    worker = role(doc, "pool-worker-1")

    def another_worker(snap):
        # a third worker of the same pool, waiting on something else (the semaphore waiter's thread)
        t = next(t for t in snap.threads if t.tid == role(doc, "sem-waiter"))
        t.pool_worker = copy.deepcopy(next(x for x in snap.threads if x.tid == worker).pool_worker)
    assert not starvation(replay(doc, another_worker)[1])

    def running(snap):
        # the future one worker waits for is running: some worker took it
        api = next(t for t in snap.threads if t.tid == worker).python_api
        api.attributes["_state"].text = "RUNNING"
    assert not starvation(replay(doc, running)[1])


def test_a_putter_to_a_full_queue_no_other_thread_reaches_can_be_drained_by_nothing_likely():
    doc = recorded("python_objects")
    _, rep = replay(doc)
    putter = role(doc, "queue-putter")
    (v,) = nothing_can_wake(rep, "py-queue-put")
    assert v["threads"] == [putter] and v["facts"]["confidence"] == "likely" and v["facts"]["complete"] is True
    assert v["facts"]["address"] == next(t["object_id"] for t in doc["truth"]["threads"] if t["role"] == "queue-putter")
    assert (v["facts"]["length"], v["facts"]["maxsize"]) == (1, 1)
    assert "waits to put to the full queue" in v["text"] and "nothing in this process can drain it" in v["text"]
    assert rep["headline"].endswith("a Queue.get nothing can fill; a Queue.put nothing can drain.")

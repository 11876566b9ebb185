"""Waits on concurrent.futures.Futures name the workers that complete them
(pyhang.analysis.python_api): a Future.result waits on the worker whose
running work item is that Future, an Event.wait inside as_completed or wait
on every worker running one of the Futures it still waits for; the frames
are found by their functions and files at any depth, garbage gives nothing.
Synthetic facts."""
from types import SimpleNamespace

from pyhang.analysis import python_api
from pyhang.model.kinds import OwnerSource, WaitKind
from pyhang.model.python_values import FrameLocals, LocalValue
from pyhang.model.report import BlockedOn, ThreadReport
from pyhang.model.snapshot import ThreadSnapshot
from pyhang.model.waits import ApiDetail, PoolWorker

BASE = "/usr/lib/python3.11/concurrent/futures/_base.py"
THREADING = "/usr/lib/python3.11/threading.py"
THREAD = "/usr/lib/python3.11/concurrent/futures/thread.py"


class View:
    """frame_keys/frames of synthetic threads: {tid: [(function, file)]}, innermost first."""

    def __init__(self, stacks):
        self.stacks = stacks

    def frame_keys(self, tid):
        return [(function, file, 1) for function, file in self.stacks.get(tid, [])]

    def frames(self, tid):
        return [SimpleNamespace(index=i) for i, _ in enumerate(self.stacks.get(tid, []))]


def test_the_as_completed_or_wait_frame_right_above_event_wait_is_found_on_3_11_and_3_6_names():
    view = View({1: [("Condition.wait", THREADING), ("Event.wait", THREADING), ("as_completed", BASE), ("main", "a.py")],
                 2: [("wait", THREADING), ("wait", THREADING), ("wait", BASE), ("main", "a.py")],   # 3.6: co_name only
                 3: [("Condition.wait", THREADING), ("Event.wait", THREADING), ("main", "a.py"), ("as_completed", BASE)],
                 4: [("Condition.wait", THREADING), ("as_completed", "/app/mine.py")],
                 5: []})
    assert python_api.futures_wait_frame(view, 1) == (2, "as_completed")
    assert python_api.futures_wait_frame(view, 2) == (2, "wait")
    # not right above the Event.wait, or another module's function of that name, or no frames: none
    assert [python_api.futures_wait_frame(view, tid) for tid in (3, 4, 5, 6)] == [None] * 4


def _locals(*values):
    return FrameLocals(locals=[LocalValue(name=n, kind="local", address=a, type=t) for n, t, a in values])


def test_the_futures_still_waited_for_are_the_pending_set_else_every_future_given():
    assert python_api.futures_local(_locals(("fs", "set", 0x10), ("pending", "set", 0x20)), "as_completed").address == 0x20
    assert python_api.futures_local(_locals(("fs", "set", 0x10), ("not_done", "set", 0x30)), "wait").address == 0x30
    assert python_api.futures_local(_locals(("fs", "set", 0x10)), "wait").address == 0x10
    # a local of another type, none readable, no locals: nothing
    assert python_api.futures_local(_locals(("pending", "list", 0x20)), "as_completed") is None
    assert python_api.futures_local(_locals(("pending", "set", 0)), "as_completed") is None
    assert python_api.futures_local(None, "wait") is None


def test_the_work_item_is_the_run_frames_self_of_its_type_only():
    assert python_api.work_item(_locals(("self", "_WorkItem", 0x40), ("ctx", "WorkerContext", 0x50))) == 0x40
    assert python_api.work_item(_locals(("self", "Garbage", 0x40))) is None
    assert python_api.work_item(_locals(("other", "_WorkItem", 0x40))) is None
    assert python_api.work_item(FrameLocals()) is None and python_api.work_item(None) is None


def _waiting(tid, kind, address, futures=None):
    return ThreadReport(tid=tid, gdb_num=tid, blocked_on=BlockedOn(
        kind=kind, address=address, owner_source=OwnerSource.UNKNOWN,
        api=ApiDetail(futures=futures, futures_by="as_completed" if futures is not None else None)))


def test_a_wait_on_several_futures_is_owned_by_every_worker_running_one_of_them_in_thread_order():
    report = SimpleNamespace(threads=[_waiting(1, WaitKind.PY_EVENT, 0x900, [0xA, 0xB, 0xC]),
                                      _waiting(2, WaitKind.PY_FUTURE, 0xD), _waiting(3, WaitKind.PY_FUTURE, 0xE),
                                      _waiting(4, WaitKind.PY_EVENT, 0x901, [0xF]),
                                      _waiting(5, WaitKind.PY_EVENT, 0x902)])
    snaps = [ThreadSnapshot(num=2, tid=2, pool_worker=PoolWorker(future=0xB)),
             ThreadSnapshot(num=3, tid=3, pool_worker=PoolWorker(future=0xA)),
             ThreadSnapshot(num=6, tid=6, pool_worker=PoolWorker(future=0xD))]
    python_api.future_runners(report, snaps)
    b = {t.tid: t.blocked_on for t in report.threads}
    assert (b[1].owners, b[1].owner_source) == ([2, 3], OwnerSource.WORK_ITEM)   # 0xC runs nowhere: still these two
    assert (b[2].owners, b[2].owner_source) == ([6], OwnerSource.WORK_ITEM)
    # a Future no worker runs, futures none of which runs, an Event outside as_completed: no owner
    assert [b[tid].owners for tid in (3, 4, 5)] == [[], [], []]
    assert all(b[tid].owner_source == OwnerSource.UNKNOWN for tid in (3, 4, 5))

"""The JSON `facts` of each heuristic's edge (model.edge_facts), key for key
and in order, as the analysis wrote them before they were records: the keys
a record leaves out (`__optional__`) are left out exactly where they were."""
import json

from pyhang.analysis import deadlocks
from pyhang.model.kinds import OwnerSource, WaitKind
from pyhang.model.report import BlockedOn, PythonFrame, ThreadReport
from pyhang.model.snapshot import ThreadSnapshot
from pyhang.model.waits import ApiDetail, CodeLine, PythonLockDetail, PythonLockEvidence
from pyhang.render.json import _edge

FILE = "/app/x.py"


def _facts(e):
    """The edge's JSON `facts`, as the report's text carries it (key order kept)."""
    return json.dumps(_edge(e, {})["facts"])


def _frame(function, line, signal=None):
    return PythonFrame(function=function, file=FILE, line=line, signal=signal)


def _lock_holding_itself(tid, frames):
    return ThreadReport(tid=tid, gdb_num=tid, python_frames=frames, blocked_on=BlockedOn(
        kind=WaitKind.PY_LOCK, address=0x100 + tid,
        evidence=PythonLockEvidence(found="slot", frame=CodeLine("inner", FILE, 3)),
        python=PythonLockDetail(locked=True, self_frames=[CodeLine("outer", FILE, 9)])))


def test_a_lock_its_waiter_holds_carries_the_handler_and_what_it_interrupted_only_inside_a_handler():
    plain = _lock_holding_itself(1, [_frame("inner", 3), _frame("outer", 9)])
    handler = _lock_holding_itself(2, [_frame("inner", 3), _frame("on_signal", 5, signal=10), _frame("work", 7)])
    outermost = _lock_holding_itself(3, [_frame("inner", 3), _frame("on_signal", 5, signal=2)])
    a, b, c = deadlocks.python_lock_holders([plain, handler, outermost])
    where = '{"function": "outer", "file": "/app/x.py", "line": 9}, "self": true, ' \
            '"waits_in": {"function": "inner", "file": "/app/x.py", "line": 3}'
    assert _facts(a) == '{"references": %s}' % where
    assert _facts(b) == '{"references": %s, "handler": {"function": "on_signal", "file": "/app/x.py", "line": 5, ' \
                        '"signal": 10}, "interrupted": {"function": "work", "file": "/app/x.py", "line": 7}}' % where
    # a handler in the outermost frame interrupted no Python frame: null, not left out
    assert _facts(c).endswith('"signal": 2}, "interrupted": null}')


def test_a_future_its_own_loop_completes_and_a_lock_others_reference():
    loop = ThreadReport(tid=4, gdb_num=4, blocked_on=BlockedOn(
        kind=WaitKind.PY_FUTURE, address=0x400, owners=[4], owner_source=OwnerSource.ASYNCIO_LOOP,
        api=ApiDetail(asyncio={"task": "t", "loop": 0x4444, "thread": 4})))
    (e,) = deadlocks.certain_edges([loop])
    assert _facts(e) == '{"self": true, "loop": 17476}'
    lock = ThreadReport(tid=5, gdb_num=5, blocked_on=BlockedOn(
        kind=WaitKind.PY_LOCK, address=0x500,
        python=PythonLockDetail(locked=True, suspects=[6, 7], suspect_frames=[CodeLine("held", FILE, 4)])))
    first, second = deadlocks.python_lock_holders([lock])
    assert _facts(first) == '{"references": {"function": "held", "file": "/app/x.py", "line": 4}}'
    assert _facts(second) == '{"references": null}'


def test_sqlite_queue_join_and_barrier_edges():
    conn = {"address": 0x77, "name": "db", "type": "sqlite3.Connection",
            "frame": {"function": "f", "file": FILE, "line": 2}}
    busy = ThreadReport(tid=6, gdb_num=6, blocked_on=BlockedOn(kind=WaitKind.SQLITE_BUSY))
    (e,) = deadlocks.sqlite_holders([busy], [ThreadSnapshot(num=7, tid=7, connections=[conn])])
    assert _facts(e) == '{"connections": [{"address": 119, "name": "db", "type": "sqlite3.Connection", ' \
                        '"frame": {"function": "f", "file": "/app/x.py", "line": 2}}]}'
    join = ThreadReport(tid=7, gdb_num=7, blocked_on=BlockedOn(
        kind=WaitKind.PY_QUEUE_JOIN, address=0x700,
        api=ApiDetail(values={"unfinished_tasks": 2}, referenced_by=[7, 8])))
    (e,) = deadlocks.queue_join_workers([join])
    assert _facts(e) == '{"reaches_queue": true}'
    barrier = ThreadReport(tid=8, gdb_num=8, blocked_on=BlockedOn(
        kind=WaitKind.PY_BARRIER, address=0x800,
        api=ApiDetail(values={"_parties": 3, "_count": 1}, referenced_by=[8, 9])))
    (e,) = deadlocks.barrier_parties([barrier])
    assert _facts(e) == '{"party": true, "parties": 3, "waiting": 1}'


def test_an_edge_a_decoder_read_for_sure_has_no_facts():
    mutex = ThreadReport(tid=1, gdb_num=1, blocked_on=BlockedOn(kind=WaitKind.MUTEX, address=0x10, owners=[2],
                                                                owner_source=OwnerSource.LOCK_WORD))
    (e,) = deadlocks.certain_edges([mutex])
    assert e.facts is None and _facts(e) == "{}"

"""The JSON `facts` of each heuristic's edge (model.edge_facts), key for key
and in order, as the analysis wrote them before they were records: the keys
a record leaves out (`__optional__`) are left out exactly where they were.
Their entries (frames, connections, sessions, a pool's checkout) are records
too, and the dicts older data holds read back into them."""
import json

from pyhang.analysis import deadlocks
from pyhang.model import edge_facts
from pyhang.model.edge_facts import HeldConnection
from pyhang.model.record import fields_of, from_data, to_data
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
    # (gather.add_sqlite_connections: a sqlite3.Connection is not typed)
    conn = HeldConnection(0x77, "db", CodeLine("f", FILE, 2))
    busy = ThreadReport(tid=6, gdb_num=6, blocked_on=BlockedOn(kind=WaitKind.SQLITE_BUSY))
    (e,) = deadlocks.sqlite_holders([busy], [ThreadSnapshot(num=7, tid=7, connections=[conn])])
    assert _facts(e) == '{"connections": [{"address": 119, "name": "db", ' \
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


# --- the entries of the facts: records (model.edge_facts), read back from the dicts older data holds

def _entries():
    """Every facts record and every record they hold, through their __nested__."""
    found, todo = list(edge_facts.FACTS), list(edge_facts.FACTS)
    while todo:
        for inner in getattr(todo.pop(), "__nested__", {}).values():
            if inner not in found:
                found.append(inner)
                todo.append(inner)
    return found


def test_no_field_of_an_edges_facts_or_their_entries_is_a_dict():
    for cls in _entries():
        for name in cls.__record_fields__:
            annotation = cls.__annotations__[name]
            assert "dict" not in annotation, "%s.%s: %s" % (cls.__name__, name, annotation)
            inner = annotation[len("list["):-1] if annotation.startswith("list[") else annotation.split(" | ")[0]
            if inner[0].isupper():   # a record: named in __nested__, so its data reads back into it
                assert cls.__nested__[name].__name__ == inner, (cls.__name__, name)


AT = {"function": "f", "file": FILE, "line": 3}
# The facts as the analysis wrote them before their entries were records: each key in its order.
OLDER = [
    (edge_facts.LockSuspectFacts, {"references": AT}),
    (edge_facts.LockSelfFacts, {"references": AT, "self": True, "waits_in": None,
                                "handler": dict(AT, signal=10), "interrupted": None}),
    (edge_facts.SqliteHoldersFacts, {"connections": [{"address": 7, "name": "db", "frame": AT}]}),
    (edge_facts.DatabaseFacts, {
        "database": {"pid": 502, "title": "postgres: a b 127.0.0.1(2) UPDATE waiting"},
        "connections": [{"address": 7, "name": "conn", "frame": AT, "type": "psycopg2.extensions.connection",
                         "status": 2, "closed": 0, "server_version": 150018, "backend_pid": 501},
                        {"address": 8, "name": "c3", "frame": AT, "type": "psycopg.Connection"}],
        "open_transactions": [{"pid": 501, "title": "postgres: a b 127.0.0.1(1) idle in transaction",
                               "state": "idle in transaction", "local": "127.0.0.1:1"}],
        "backend": {"pid": 501, "title": "postgres: a b 127.0.0.1(1) idle in transaction",
                    "state": "idle in transaction", "local": "127.0.0.1:1"},
        "status_agrees": True}),
    (edge_facts.DatabaseFacts, {"database": {"pid": 502, "title": None},
                                "connections": [{"address": 7, "name": "conn", "frame": AT,
                                                 "type": "psycopg2.extensions.connection", "status": None,
                                                 "closed": None, "server_version": None, "backend_pid": None}],
                                "open_transactions": []}),
    (edge_facts.PoolCheckoutFacts, {"pool": {"pool": 80, "type": "QueuePool", "frame": AT},
                                    "connections": [{"address": 7, "name": "conn", "frame": AT, "type": "Connection",
                                                     "pool": 80}]}),
    (edge_facts.DriverLockFacts, {"library": "/lib/libcuda.so.1", "library_frame": 3, "driver_library": True,
                                  "waits_for_gil": True, "callback": {"function": "PyGILState_Ensure", "frame": 1},
                                  "blocked_kind": "gil"}),
]


def test_an_older_pyhangs_facts_read_back_into_records_and_give_the_same_json():
    for cls, data in OLDER:
        facts = from_data(cls, data)
        assert json.dumps(to_data(facts)) == json.dumps(data), cls.__name__
        # each entry a record: nothing of the facts is a dict any more
        for value in fields_of(facts).values():
            for v in value if isinstance(value, list) else [value]:
                assert not isinstance(v, dict), (cls.__name__, v)


def test_the_connections_the_analysis_gathers_keep_their_keys_in_order():
    # a psycopg2 connection, members read: its type, then the members, then its backend
    conn = HeldConnection(0x10, "conn", CodeLine("f", FILE, 3), type=edge_facts.PSYCOPG2_CONNECTION, status=2,
                          closed=0, server_version=150018, backend_pid=None)
    assert list(to_data(conn)) == ["address", "name", "frame", "type", "status", "closed", "server_version",
                                   "backend_pid"]
    # a sqlite3 connection is not typed; a pool's connection has its pool last
    assert list(to_data(HeldConnection(0x10, "db", CodeLine("f", FILE, 3)))) == ["address", "name", "frame"]
    pooled = HeldConnection(0x10, "conn", CodeLine("f", FILE, 3), type="Connection", pool=0x80)
    assert list(to_data(pooled)) == ["address", "name", "frame", "type", "pool"]

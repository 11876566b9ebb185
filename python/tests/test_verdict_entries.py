"""The entries of a verdict's facts (a wait, a worker, a group of ranks, a
dead process, what an incomplete report still read) are records of
model.verdict_facts, as the facts themselves are: the analysis makes them,
render reads their fields, and the JSON gives each as the dict it has
always been, its keys in the same order, each left out where it always was.
Data an older pyhang wrote (the dicts) is read back into the records.
(test_hazard_entries holds a fork hazard's facts to the same, with the
helpers here.)"""
import copy
import glob
import json
import os

from pyhang import analysis
from pyhang.model import verdict_facts
from pyhang.model.record import from_data, to_data
from pyhang.model.references import ObjectPath
from pyhang.model.report import Verdict
from pyhang.model.waits import CodeLine
from pyhang.render import json as render_json, verdicts

SNAPSHOTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "testdata", "snapshots")
# Lists of a verdict's facts that still hold JSON's dicts, and why (none now).
STILL_DICTS = {}
PLAIN = {"int": 1, "str": "x", "bool": True, "float": 0.5, "object": None}
_VALUES = {"list[dict]": []}   # (STILL_DICTS: none to fill)


def entry_records(facts=verdict_facts.FACTS.values(), plain=(ObjectPath, CodeLine)):
    """Every record the records `facts` hold, found through their __nested__, but for the `plain` ones (a
    variable's path, a frame's line)."""
    found, todo = [], list(facts)
    while todo:
        for inner in getattr(todo.pop(), "__nested__", {}).values():
            if inner not in found and inner not in plain:
                found.append(inner)
                todo.append(inner)
    return found


def _value(cls, name, values):
    """A value of field `name` of record `cls` of the type it is annotated with: a record of its own
    (sample()) where __nested__ names one, a list of one where it is a list, `values`' for its type."""
    annotation = cls.__annotations__[name]
    inner = getattr(cls, "__nested__", {}).get(name)
    if inner is ObjectPath:
        return ObjectPath(module="app", variable="LOCK")
    if inner is not None:
        return [sample(inner, values)] if annotation.startswith("list[") else sample(inner, values)
    base = annotation.split(" | ")[0]
    if base in values:
        return values[base]
    return [1] if base.startswith("list[") else PLAIN.get(base)


def sample(cls, values=_VALUES):
    """A record of class `cls` with every field filled, its entries too (`values`: {annotated type: value}
    where PLAIN's or [1] is not one)."""
    return cls(**{name: _value(cls, name, values) for name in cls.__record_fields__})


def assert_records_named(classes, still=STILL_DICTS, single=False):
    """No field of records `classes` holds a dict, but those `still` lists; a list's records are of the class
    the record's __nested__ names (`single`: a field's one record too)."""
    for cls in classes:
        for name in cls.__record_fields__:
            annotation = cls.__annotations__[name]
            if (cls.__name__, name) in still:
                assert "dict" in annotation, "%s.%s is a record's now: take it off STILL_DICTS" % (cls.__name__, name)
                continue
            assert "dict" not in annotation, "%s.%s: %s" % (cls.__name__, name, annotation)
            listed = annotation.startswith("list[")
            item = annotation[len("list["):].split("]")[0] if listed else annotation if single else None
            item = item and item.split(" | ")[0]
            if item is not None and item not in PLAIN:
                assert getattr(cls, "__nested__", {}).get(name).__name__ == item, (cls.__name__, name)


def recorded_reports():
    """(file name, Report) of every recorded snapshot (testdata/snapshots), analysed."""
    for path in sorted(glob.glob(os.path.join(SNAPSHOTS, "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        yield os.path.basename(path), analysis.from_snapshot(copy.deepcopy(doc["snapshot"]))[1]


def test_every_list_a_verdicts_facts_hold_is_of_records_its_class_names():
    assert_records_named(list(verdict_facts.FACTS.values()) + entry_records())


def dicts_in(value, where, still=STILL_DICTS):
    """Where in `value` (a record, or lists of them) a dict is held, but in the fields `still` lists: [path]."""
    if isinstance(value, dict):
        return [where]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in dicts_in(v, "%s[%d]" % (where, i), still)]
    fields = getattr(type(value), "__record_fields__", ())
    return [p for name in fields if (type(value).__name__, name) not in still
            for p in dicts_in(getattr(value, name), "%s.%s" % (where, name), still)]


def test_the_verdicts_the_analysis_makes_of_the_recorded_snapshots_hold_no_dict():
    seen = set()
    for name, report in recorded_reports():
        for v in report.verdicts:
            seen.add(v.kind)
            assert not dicts_in(v.facts, v.kind), (name, dicts_in(v.facts, v.kind))
    assert {"owners-unknown", "idle", "unaccounted"} <= seen


def test_every_kinds_facts_filled_to_their_entries_go_to_data_and_back_and_are_worded():
    for kind, cls in verdict_facts.FACTS.items():
        data = to_data(sample(cls))
        assert not dicts_in(from_data(cls, data), kind)
        assert json.dumps(to_data(from_data(cls, data))) == json.dumps(data), kind
        # (a snapshot's verdict: its facts read from their data; what to_data leaves out is not in it)
        v = Verdict(kind=kind, threads=[1], facts=json.loads(json.dumps(data)))
        assert isinstance(v.facts, cls) and to_data(v.facts) == data, kind
        assert isinstance(verdicts.verdict_text(v, str), str), kind
        json.dumps(render_json.verdict_facts(v.facts))


def _round_trip(cls, data):
    return to_data(from_data(cls, data))


def test_an_older_pyhangs_entries_give_back_the_same_dicts_their_keys_in_order_left_out_where_they_were():
    # an idle wait of a Pool's loop has pool_loop, the others do not
    for wait in ({"tid": 1, "kind": "py-event", "address": 16, "name": None, "work_queue": None},
                 {"tid": 2, "kind": "syscall", "address": None, "name": None, "work_queue": None,
                  "pool_loop": "worker"}):
        assert list(_round_trip(verdict_facts.IdleWait, wait).items()) == list(wait.items())
    # an owners-unknown wait has its call and link only in a system call, null or not
    for wait in ({"tid": 1, "kind": "py-semaphore", "address": 16, "name": None},
                 {"tid": 2, "kind": "syscall", "address": None, "name": None, "call": "read", "link": None}):
        assert list(_round_trip(verdict_facts.UnknownOwnerWait, wait).items()) == list(wait.items())
    # an unaccounted wait: a system call's fields and raw arguments, or a futex word, and sleepers only then
    call = {"tid": 1, "reason": "own-process", "kind": "syscall", "address": None, "pids": [7], "call": "write",
            "fd": 1, "link": "pipe:[2]", "object_kind": "pipe", "direction": "write", "arguments": [1, 2, None],
            "native": {"function": "write", "library": "libc.so.6"},
            "python": {"function": "f", "file": "x.py", "line": 3}}
    futex = {"tid": 2, "reason": "sleep-unknown", "kind": "py-lock", "address": 16, "pids": [], "futex": 32,
             "native": None, "python": None, "sleepers": [1]}
    for wait in (call, futex):
        assert json.dumps(_round_trip(verdict_facts.UnaccountedWait, wait)) == json.dumps(wait)
    # a wait on processes: a collective's has no peers, a gRPC call's its targets
    rank = {"tid": 1, "syscall": None, "fd": None, "link": None, "pids": [],
            "collective": {"function": "barrier", "line": 9, "backend": "gloo", "rank": 1, "world_size": 2,
                           "transport": None}}
    grpc = {"tid": 2, "syscall": "epoll_wait", "fd": 5, "link": "socket:[3]", "pids": [9],
            "peers": [{"pid": 9, "comm": "server", "title": None}], "grpc": {"targets": ["127.0.0.1:50051"]}}
    for wait in (rank, grpc):
        assert json.dumps(_round_trip(verdict_facts.ProcessWait, wait)) == json.dumps(wait)
    # what an incomplete report still read, in its order
    read = {"native_stacks": [1], "syscall_waits": [], "lock_waits": [1], "python_status": "ok",
            "lock_layouts": False, "deadlocks": 0}
    assert json.dumps(_round_trip(verdict_facts.StillRead, read)) == json.dumps(read)


def test_the_json_words_the_object_an_entry_names_as_it_did_the_dicts():
    wait = verdict_facts.UnknownOwnerWait(tid=1, kind="py-event", address=16,
                                          name=ObjectPath(module="__main__", variable="stop"))
    facts = render_json.verdict_facts(verdict_facts.OwnersUnknownFacts(waits=[wait]))
    assert facts == {"waits": [{"tid": 1, "kind": "py-event", "address": 16, "name": "__main__.stop"}]}

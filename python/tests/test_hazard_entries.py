"""The entries of a fork hazard's facts (glibc's internal lock, a descriptor
of a parent thread fork did not copy, the parent's threads a tree's hazard
names, a child's gRPC calls, the containers it reads, the memory of a
parent's children) are records, as the facts themselves are
(model.hazard_facts): the analysis makes them, render reads their fields,
and to_data gives each as the dict it has always been, its keys in the same
order, a parent thread's `references` left out where it always was.  Data
an older pyhang wrote (the dicts) is read back into the records."""
import json

from pyhang.model import hazard_facts, kinds
from pyhang.model.fork_facts import CodeAddress, InternalLock, ThreadDescriptor
from pyhang.model.record import from_data, to_data
from pyhang.model.references import ObjectPath
from pyhang.model.report import Hazard
from pyhang.model.waits import CodeLine
from pyhang.render import forks
from test_verdict_entries import assert_records_named, dicts_in, entry_records, recorded_reports, sample

# Fields of the facts that still hold JSON's dicts, and why.
STILL_DICTS = {
    ("CowFacts", "smaps_rollup"): "the kernel's table of sizes by name, as model.fork_facts.ProcessFacts keeps it",
    ("OtherHazardFacts", "given"): "the facts of a kind this pyhang does not know, as they were given",
}
# What sample() fills a field of these types with (a thread's names, a smaps_rollup)
VALUES = {"list[str]": ["x"],
          "dict[str, int]": {"Rss": 8192, "Pss": 6144, "Private_Dirty": 4096, "Shared_Clean": 2048, "Shared_Dirty": 0}}


def test_every_field_of_the_facts_and_their_entries_is_of_records_its_class_names():
    facts = list(hazard_facts.FACTS.values()) + [hazard_facts.OtherHazardFacts]
    assert_records_named(facts + entry_records(facts, plain=(ObjectPath,)), STILL_DICTS, single=True)


def test_the_hazards_the_analysis_makes_of_the_recorded_snapshots_hold_no_dict():
    seen = set()
    for name, report in recorded_reports():
        for h in report.fork_hazards:
            seen.add((h.kind, h.variant))
            assert not dicts_in(h.facts, h.kind, STILL_DICTS), (name, dicts_in(h.facts, h.kind, STILL_DICTS))
    assert {(kinds.HazardKind.ORPHANED_LOCK, "owner-gone"), (kinds.HazardKind.THREADS_AT_FORK, "")} <= seen


def test_every_kinds_facts_filled_to_their_entries_go_to_data_and_back_and_are_worded():
    for (kind, variant), cls in hazard_facts.FACTS.items():
        data = to_data(sample(cls, VALUES))
        assert not dicts_in(from_data(cls, data), kind, STILL_DICTS)
        assert json.dumps(to_data(from_data(cls, data))) == json.dumps(data), (kind, variant)
        # (facts given as data, an older pyhang's: read into the records of their kind and variant)
        h = Hazard(kind, [1], kinds.Confidence.LIKELY, variant, json.loads(json.dumps(data)))
        assert isinstance(h.facts, cls) and to_data(h.facts) == data, (kind, variant)
        assert isinstance(forks.evidence(h, str), str), (kind, variant)


def _round_trip(cls, data):
    return json.dumps(to_data(from_data(cls, data)))


DESCRIPTOR = {"address": 0x7f00, "stack": [0x7000, 0x8000], "tid": 0, "cancelhandling": 2, "exited": False,
              "start_routine": {"address": 0x401000, "function": "holder", "library": "/x/libfix.so"}}
INTERNAL = {"name": "__exit_funcs_lock", "address": 0x10, "found": "symbol", "library": "/lib/libc.so.6"}
CONTAINER = {"where": "__main__.DATA", "type": "list", "length": 400000, "address": 0x7f0000,
             "estimated_bytes": 38 << 20}


def test_an_older_pyhangs_entries_give_back_the_same_dicts_their_keys_in_order_left_out_where_they_were():
    # an owner gone: glibc's lock and the descriptor of the pthread_t the lock records
    gone = {"thread": 5, "kind": "py-rlock", "address": 0x20, "library": None, "gone": [], "internal": INTERNAL,
            "child": True, "owner_ident": 0x7f00, "descriptor": DESCRIPTOR, "parent_pid": None, "in_parent": None,
            "forked_by": "other", "processes": None}
    assert _round_trip(hazard_facts.OwnerGoneLockFacts, gone) == json.dumps(gone)
    # the parent's threads: a frame referencing the lock only where the parent's threads reference it
    owner = {"tid": 101, "num": 2, "name": "holder", "python_name": None}
    referencing = dict(owner, references={"function": "hold", "file": "/srv/app.py", "line": 27})
    for cls, thread in ((hazard_facts.ParentThreadLockFacts, owner), (hazard_facts.ParentReferenceFacts, referencing),
                        (hazard_facts.ParentPoolFacts, owner), (hazard_facts.ParentOwnerFacts, owner)):
        data = to_data(from_data(cls, {"parent_threads": [thread]}))
        assert json.dumps(data["parent_threads"]) == json.dumps([thread]), cls.__name__
    # a child's gRPC calls and the pool's descriptor; a child's containers; a parent's children
    grpc = {"library": "/x/cygrpc.so", "pool": 1, "pool_example": DESCRIPTOR, "inside": [7],
            "calls": [{"tid": 7, "function": "_blocking", "file": "/x/grpc/_channel.py", "line": 1100}],
            "forked_by": None, "processes": None}
    assert _round_trip(hazard_facts.GrpcFacts, grpc) == json.dumps(grpc)
    cow = {"smaps_rollup": {"Private_Dirty": 4096, "Rss": 8192}, "containers": [CONTAINER], "forked_by": None,
           "processes": None}
    assert _round_trip(hazard_facts.CowFacts, cow) == json.dumps(cow)
    children = {"children": [{"pid": 200, "private_dirty_kb": 30720, "shared_kb": 10240, "rss_kb": 40960}],
                "children_count": 1, "reading": [200], "private_dirty_kb": 30720, "containers": [CONTAINER],
                "processes": [100, 200], "forked_by": None}
    assert _round_trip(hazard_facts.CowChildrenFacts, children) == json.dumps(children)
    lost = {"lost": [DESCRIPTOR], "parent_pid": 100, "parent_threads": 2, "parent_thread_names": ["main"],
            "forked_by": None, "processes": None}
    assert _round_trip(hazard_facts.ThreadsAtForkFacts, lost) == json.dumps(lost)


def test_the_sentences_read_the_entries_fields():
    # glibc's lock, found by its symbol; the pthread_t's descriptor, started in a fixture library
    lock = InternalLock(name="__exit_funcs_lock", address=0x10, found="symbol", library="/lib/libc.so.6")
    descriptor = ThreadDescriptor(address=0x7f00, start_routine=CodeAddress(address=0x401000, function="holder",
                                                                            library="/x/libfix.so"))
    h = Hazard(kinds.HazardKind.ORPHANED_LOCK, [5], kinds.Confidence.CERTAIN, "owner-gone",
               hazard_facts.OwnerGoneLockFacts(thread=5, kind="py-rlock", address=0x20, owner_ident=0x7f00,
                                               internal=lock, descriptor=descriptor))
    assert forks.evidence(h, str) == (
        "5 waits on py-rlock 0x20; its owner pthread_t 0x7f00 is not a thread of this process; it is the "
        "descriptor of a parent thread that fork did not copy, holder (libfix.so): that thread held the lock at "
        "fork; the lock is glibc's __exit_funcs_lock (symbol __exit_funcs_lock of /lib/libc.so.6)")
    # a descriptor whose start routine is not known
    assert forks._start_routine(ThreadDescriptor()) == forks._start_routine(None) == "a thread started at 0x0 (?)"
    # the parent's threads referencing a lock, each at its frame
    thread = hazard_facts.ParentThread(tid=101, num=2, name="holder",
                                       references=CodeLine(function="hold", file="/srv/app.py", line=27))
    h = Hazard(kinds.HazardKind.ORPHANED_LOCK, [5], kinds.Confidence.LIKELY, "parent-reference",
               hazard_facts.ParentReferenceFacts(thread=5, kind="py-lock", address=0x20, type="_thread.lock",
                                                 refcount=3, parent_pid=100, parent_threads=[thread]))
    assert ('Thread 2 (LWP 101) "holder" references the lock in File "/srv/app.py", line 27, in hold'
            in forks.evidence(h, str))

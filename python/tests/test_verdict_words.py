"""Every verdict kind has its place in the answer: a rank in
model.kinds.SEVERITY, a title, and, for a hang, the words of the headline;
every hang and unknown wait has a next step; every kind has the record of
its facts (model.verdict_facts) and is worded from it."""
from pyhang.model.references import ObjectPath
from pyhang.model import kinds, verdict_facts
from pyhang.model.record import replace, to_data
from pyhang.model.report import Verdict
from pyhang.render import process_verdicts, verdicts


def verdict_kinds():
    return {v for k, v in vars(kinds.VerdictKind).items() if k.isupper()}


def test_every_verdict_kind_is_ranked_and_titled():
    assert verdict_kinds() <= set(kinds.SEVERITY)
    assert verdict_kinds() == set(verdicts.TITLES)


def test_every_hang_has_headline_words_and_advice():
    hangs = set(kinds.HANG_VERDICTS) | {kinds.HazardKind.ORPHANED_LOCK, kinds.HazardKind.OPENMP_AFTER_FORK,
                                          kinds.HazardKind.GRPC_AFTER_FORK}
    assert hangs == set(verdicts.HANG_SUMMARIES)
    assert set(kinds.HANG_VERDICTS) | {kinds.VerdictKind.OWNERS_UNKNOWN} <= set(verdicts.ADVICE)


def test_an_unknown_kind_ranks_after_every_known_one():
    assert kinds.severity("some-future-kind") == len(kinds.SEVERITY) > kinds.severity(kinds.VerdictKind.IDLE)


# --- every kind has its facts record and its words

def _value(annotation):
    """A value of the type a facts field is annotated with (its first type when it may be None)."""
    base = annotation.split(" | ")[0]
    return {"int": 1, "str": "x", "bool": False, "float": 0.5, "dict": {}, "object": None,
            "ObjectPath": ObjectPath(module="app", variable="LOCK")}.get(base, [])


def sample(kind):
    """A verdict of `kind` whose facts record has every field filled with a value of its type."""
    cls = verdict_facts.FACTS[kind]
    facts = cls(**{name: _value(cls.__annotations__[name]) for name in cls.__record_fields__})
    return Verdict(kind=kind, threads=[1], facts=facts)


def test_every_verdict_kind_has_a_facts_record_with_typed_fields():
    assert verdict_kinds() == set(verdict_facts.FACTS)
    for kind, cls in verdict_facts.FACTS.items():
        assert cls.__record_fields__[-1] == "moved", kind   # a second look's: analysis.progress sets it on any
        assert all(name in cls.__annotations__ for name in cls.__record_fields__), kind
        assert set(getattr(cls, "__optional__", {})) <= set(cls.__record_fields__), kind


def test_every_verdict_kind_is_worded_from_its_facts_never_by_the_words_of_an_unknown_kind():
    unknown = verdicts.verdict_text(Verdict(kind="some-future-kind", threads=[1], facts={"x": 1}), str)
    assert unknown == "some-future-kind: 1"
    for kind in sorted(verdict_kinds()):
        text = verdicts.verdict_text(sample(kind), str)
        assert isinstance(text, str) and text != "%s: 1" % kind, (kind, text)


def test_facts_given_as_data_an_older_pyhang_wrote_are_read_into_the_kinds_record():
    v = Verdict(kind=kinds.VerdictKind.NOTHING_CAN_WAKE, threads=[5], facts={
        "kind": "py-queue-get", "address": 16, "name": None, "waiters": [5], "referenced_by": [5], "complete": True,
        "confidence": "likely", "length": 0, "maxsize": 0, "a_key_of_a_newer_pyhang": 1})
    assert isinstance(v.facts, verdict_facts.NothingCanWakeFacts) and v.facts.waiters == [5]
    # and given back as the same data, in the same order, leaving out what the data left out
    assert list(to_data(v.facts)) == ["kind", "address", "name", "waiters", "referenced_by", "complete",
                                      "confidence", "length", "maxsize"]
    v.facts.moved = [5]
    assert to_data(v.facts)["moved"] == [5]
    assert Verdict(kind=kinds.VerdictKind.GIL_NOBODY_HOLDS, threads=[1]).facts == verdict_facts.GilNobodyHoldsFacts()
    assert Verdict(kind="some-future-kind", threads=[1], facts={"x": 1}).facts == {"x": 1}


def test_a_wait_on_a_server_no_tree_from_here_holds_does_not_send_the_reader_to_tree():
    from pyhang.model.verdict_facts import WaitsOnProcessFacts
    wait = verdict_facts.ProcessWait(tid=5, syscall="recvfrom", fd=7, link="socket:[9]", pids=[700],
                                     peers=[verdict_facts.ProcessPeer(pid=700, comm="redis-server")])
    apart = process_verdicts.waits_on_process_text(WaitsOnProcessFacts(waits=[wait], root=100, outside=[700]), str)
    assert "which no tree of processes from PID 100 holds" in apart and "--tree" not in apart, apart
    assert "`pyhang report -p 700` reads it when it runs Python" in apart, apart
    # in the tree, or its parents unknown: the tree examines both
    for outside in (None, []):
        near = process_verdicts.waits_on_process_text(WaitsOnProcessFacts(waits=[wait], root=100, outside=outside), str)
        assert "`pyhang report --tree -p 100` examines them together" in near and "no tree" not in near, near
    # one holder of two apart: the tree still, and which one it does not hold
    two = replace(wait, pids=[700, 101])
    mixed = process_verdicts.waits_on_process_text(WaitsOnProcessFacts(waits=[two], root=100, outside=[700]), str)
    assert "`pyhang report --tree -p 100`" in mixed and mixed.endswith("; PID 700 no tree from there holds"), mixed

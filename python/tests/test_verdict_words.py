"""Every verdict kind has its place in the answer: a rank in
model.kinds.SEVERITY, a title, and, for a hang, the words of the headline;
every hang and unknown wait has a next step."""
from pyhang.model import kinds
from pyhang.render import verdicts


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

"""Fork facts come from the decoders as data (kinds, numbers, paths) and
are worded in render/forks.py: every kind has its words; every fork hazard
kind has the records of its facts and is worded from them."""
from pyhang.model import kinds
from pyhang.render import forks


def members(vocabulary):
    return {v for k, v in vars(vocabulary).items() if k.isupper()}


def test_every_fork_problem_has_its_words_with_its_numbers_and_text():
    for kind in members(kinds.ForkProblem) - {kinds.ForkProblem.NONE}:
        words = forks.fork_problem({"kind": kind, "number": 4096, "other": 7, "text": "/lib/libc.so.6"})
        assert words and kind not in words, kind
    assert "4096" in forks.fork_problem({"kind": kinds.ForkProblem.TOO_MANY_MAPPINGS, "number": 4096, "other": 0,
                                         "text": ""})
    assert "/lib/libc.so.6" in forks.fork_problem({"kind": kinds.ForkProblem.NO_CXA_FINALIZE, "number": 0,
                                                   "other": 0, "text": "/lib/libc.so.6"})


def test_how_an_internal_lock_was_found_and_whose_address_space_it_is_are_worded_from_facts():
    from pyhang.model.fork_facts import InternalLock
    hidden = InternalLock(name="__exit_funcs_lock", found=kinds.LockFound.CXA_FINALIZE_CODE, library="/lib/libc.so.6")
    assert "__cxa_finalize" in forks._found(hidden) and "libc.so.6" in forks._found(hidden)
    spaces = {"same": True, "exe": "/usr/bin/python3", "parent_exe": "/usr/bin/python3",
              "mapped": {"exe": 0x400000, "libc": 0x7f0000000000, "heap": 0x1000000},
              "parent_mapped": {"exe": 0x400000, "libc": 0x7f0000000000, "heap": 0x1000000}}
    assert forks._address_spaces(spaces).startswith("same executable /usr/bin/python3, mapped at 0x400000")
    assert "parent's copy" in forks._address_spaces(spaces)


def test_what_was_not_collected_is_said_as_it_is():
    from pyhang.model.unread import not_collected
    assert forks.fork_problem(not_collected()) == "not collected"


def test_an_issue_missing_what_its_kind_names_is_said_by_its_kind_not_raised():
    assert forks.fork_problem({"kind": kinds.ForkProblem.TOO_MANY_MAPPINGS}) == "too-many-mappings (None)"


def test_a_trees_line_for_a_hazard_of_one_process_says_what_it_is_whether_it_hangs_and_where_it_is_explained():
    from pyhang.model.kinds import Confidence, HazardKind
    from pyhang.model.report import Hazard
    from pyhang.model.tree import TreeReport
    from pyhang.render.tree import render_fork_hazards
    tree = TreeReport(root_pid=7, fork_hazards=[
        (7, Hazard(kind=HazardKind.FORK_START_METHOD, threads=[], confidence=Confidence.CERTAIN, variant="")),
        (9, Hazard(kind=HazardKind.THREADS_AT_FORK, threads=[], confidence=Confidence.CERTAIN, variant=""))])
    assert render_fork_hazards(tree) == [
        "Fork hazard [fork-start-method] in PID 7: multiprocessing starts its processes with fork while threads run "
        "(a risk, not a hang by itself); PID 7's report below says why",
        "Fork hazard [threads-at-fork] in PID 9: the process had other threads when it was forked (a risk, not a "
        "hang by itself); PID 9's report below says why"]


# --- every hazard kind has the records of its facts (model.hazard_facts) and is worded from them

def test_every_hazard_kind_has_facts_records_and_each_is_worded_from_its_fields():
    from pyhang.model import hazard_facts
    from pyhang.model.report import Hazard
    from test_hazard_entries import VALUES
    from test_verdict_entries import sample
    assert {kind for kind, _ in hazard_facts.FACTS} == members(kinds.HazardKind)
    for (kind, variant), cls in hazard_facts.FACTS.items():
        assert {"forked_by", "processes"} <= set(cls.__record_fields__), (kind, variant)
        facts = sample(cls, VALUES)   # (its entries filled too)
        facts.forked_by = facts.processes = None
        h = Hazard(kind, [1], kinds.Confidence.LIKELY, variant, facts)
        assert h.facts is facts
        words = forks.evidence(h, str)
        assert isinstance(words, str), (kind, variant)   # (a kind without words: no entry in forks._EVIDENCE)
        assert forks.hazard_advice(h), (kind, variant)


def test_hazard_facts_given_as_data_are_read_into_the_record_of_their_kind_and_variant():
    from pyhang.model import hazard_facts
    from pyhang.model.report import Hazard
    h = Hazard(kinds.HazardKind.ORPHANED_LOCK, [5], kinds.Confidence.LIKELY, "python-lock",
               {"thread": 5, "kind": "py-lock", "address": 16, "lost": 1})
    assert h.facts == hazard_facts.PythonLockFacts(thread=5, kind="py-lock", address=16, lost=1)
    # a kind or variant this pyhang does not know keeps what it was given, worded by no rule of its own
    other = Hazard("some-future-hazard", [], kinds.Confidence.LIKELY, "", {"x": 1, "processes": [7, 8]})
    assert other.facts.given == {"x": 1, "processes": [7, 8]} and other.facts.processes == [7, 8]

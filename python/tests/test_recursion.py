"""Recursion folded: runs of frames that repeat in a row, found in one pass
over the frames (any period up to MAX_PERIOD, the one covering most frames
winning), never overlapping; short stacks and cycles too long fold nothing."""
from pyhang.render.recursion import MAX_PERIOD, Run, runs


def test_one_function_calling_itself_is_one_run_of_period_one():
    keys = ["sleep", "park"] + ["descend"] * 5000 + ["<module>"]
    assert runs(keys) == [Run(start=2, period=1, repeats=5000)]


def test_two_functions_calling_each_other_are_one_run_of_period_two():
    keys = ["park", "pong0"] + ["ping", "pong"] * 300 + ["ping", "mutual"]
    (r,) = runs(keys)
    assert (r.start, r.period, r.repeats) == (2, 2, 300) and keys[r.end:] == ["ping", "mutual"]


def test_the_period_covering_most_frames_wins_and_runs_do_not_overlap():
    keys = ["a"] * 4 + ["b", "c"] * 3 + ["d"]
    assert runs(keys) == [Run(start=0, period=1, repeats=4), Run(start=4, period=2, repeats=3)]
    # a run of "a a" pairs is a run of "a": the shorter period on a tie
    assert runs(["a"] * 6) == [Run(start=0, period=1, repeats=6)]


def test_fewer_than_three_repeats_or_a_longer_period_fold_nothing():
    assert runs(["a", "a", "b"]) == []
    cycle = ["f%d" % i for i in range(MAX_PERIOD + 1)]
    assert runs(cycle * 5) == []
    assert runs([]) == [] and runs(["x"]) == [] and runs([None, None, None]) == [Run(start=0, period=1, repeats=3)]


def test_ten_thousand_distinct_frames_fold_nothing_and_ten_thousand_equal_ones_fold_to_one_run():
    assert runs(list(range(10000))) == []
    assert runs([7] * 10000) == [Run(start=0, period=1, repeats=10000)]

"""Which Python frames each evaluation-loop frame runs (pyhang.analysis.eval_frames):
one per call up to 3.10, runs ending at entry frames from 3.11, and no
pairing at all when the counts disagree."""
from pyhang.analysis.eval_frames import EVAL_LOOP, pair_indices, pair_runs, python_runs
from pyhang.model.python_facts import PyFrameFacts


def frame(name, entry=False):
    return PyFrameFacts(function=name, file="app.py", line=1, entry_frame=entry)


def test_without_entry_frames_each_python_frame_is_one_eval_loop_call():
    frames = [frame("inner"), frame("outer"), frame("<module>")]
    names = ["sleep", EVAL_LOOP, "call", EVAL_LOOP, EVAL_LOOP, "main"]
    assert pair_runs(names, frames) == {1: [frames[0]], 3: [frames[1]], 4: [frames[2]]}


def test_with_entry_frames_one_eval_loop_call_runs_the_frames_up_to_its_entry_frame():
    frames = [frame("park"), frame("settle", True), frame("run"), frame("_bootstrap", True)]
    assert python_runs(frames) == [frames[:2], frames[2:]]
    assert pair_runs(["nanosleep", "??", EVAL_LOOP, "vectorcall", EVAL_LOOP, "start_thread"], frames) == {
        2: frames[:2], 4: frames[2:]}


def test_counts_that_disagree_pair_nothing_rather_than_something_wrong():
    frames = [frame("park"), frame("settle", True), frame("run"), frame("_bootstrap", True)]
    assert pair_runs(["nanosleep", EVAL_LOOP, "start_thread"], frames) == {}
    assert pair_runs(["nanosleep", EVAL_LOOP, EVAL_LOOP, EVAL_LOOP], frames) == {}
    assert pair_runs(["nanosleep", "main"], []) == {}


def test_one_frame_object_repeated_in_a_stack_is_paired_by_its_positions():
    # Equal frames are one shared object (python_frames(shared=True)): recursion repeats it.
    recurse = frame("descend")
    frames = [recurse, recurse, recurse]
    assert pair_indices(["wait", EVAL_LOOP, EVAL_LOOP, EVAL_LOOP], frames) == {1: [0], 2: [1], 3: [2]}
    entry = frame("descend", True)
    assert pair_indices(["wait", EVAL_LOOP, "call", EVAL_LOOP], [recurse, entry, recurse, entry]) == {
        1: [0, 1], 3: [2, 3]}


def test_a_stack_whose_middle_was_not_kept_pairs_from_both_ends():
    from pyhang.model.report import FramesOmitted
    # GIVEN 3.10's model: one loop per frame, 2 innermost and 2 outermost frames kept, 3 left out between
    frames = [frame("f")] * 2 + [frame("f"), frame("<module>")]
    names = ["sleep"] + [EVAL_LOOP] * 7 + ["main"]
    omitted = FramesOmitted(at=2, count=3)
    # THEN the kept frames pair with the loops at each end, the three loops between with nothing
    assert pair_indices(names, frames, omitted) == {1: [0], 2: [1], 6: [2], 7: [3]}
    assert pair_indices(names[:-2] + ["main"], frames, omitted) == {}    # a loop short: no pairing
    # AND 3.11's: runs end at entry frames; with none in the middle one loop runs both kept ends of its run
    frames = [frame("inner"), frame("f"), frame("f"), frame("<module>", entry=True)]
    assert pair_indices(["wait", EVAL_LOOP, "main"], frames, omitted) == {1: [0, 1, 2, 3]}
    # AND with entry frames in the middle, more loops than runs: the ends pair from each side
    frames = [frame("inner", entry=True), frame("f"), frame("f", entry=True), frame("<module>", entry=True)]
    assert pair_indices(["wait", EVAL_LOOP, "c", EVAL_LOOP, EVAL_LOOP, EVAL_LOOP, EVAL_LOOP, "main"], frames,
                        omitted) == {1: [0], 3: [1], 5: [2], 6: [3]}
    assert pair_indices(["wait", EVAL_LOOP, EVAL_LOOP, "main"], frames, omitted) == {}

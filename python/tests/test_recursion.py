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


def _frames(names):
    from pyhang.model.report import PythonFrame
    return [PythonFrame(n, "/app/deep.py", 7 if n == "descend" else 1) for n in names]


def test_a_run_never_spans_the_place_of_a_deep_stacks_omitted_middle():
    from pyhang.render.recursion import stack_runs
    frames = _frames(["park"] + ["descend"] * 6 + ["descend"] * 4 + ["<module>"])
    # GIVEN the middle of the stack omitted between index 7 and 8: the descends each side are two runs
    assert stack_runs(frames, 7) == [Run(start=1, period=1, repeats=6), Run(start=7, period=1, repeats=4)]
    assert stack_runs(frames) == [Run(start=1, period=1, repeats=10)]


def test_the_text_stack_says_how_many_frames_of_the_middle_it_does_not_show_and_folds_each_side():
    from pyhang.model.report import FramesOmitted
    from pyhang.render.text import python_stack_lines
    frames = _frames(["park"] + ["descend"] * 6 + ["descend"] * 4 + ["<module>"])
    out = []
    python_stack_lines(frames, "  ", out, lambda f, indent, o: o.append(indent + f.function),
                       FramesOmitted(at=7, count=5000))
    assert out == ["  park", "  descend", "  [recursion: the frame above 5 more times]",
                   "  [5,000 frames not shown between these: the stack is 5,012 frames deep; its innermost 7 and "
                   "outermost 5 are shown]",
                   "  descend", "  [recursion: the frame above 3 more times]", "  <module>"]


def test_the_json_thread_carries_its_folded_stack_and_its_omitted_middle_beside_every_frame():
    from pyhang.model.report import FramesOmitted, Report, TargetInfo, ThreadReport
    from pyhang.render import json as render_json
    th = ThreadReport(tid=5, gdb_num=1, python_frames=_frames(["park"] + ["descend"] * 10 + ["<module>"]),
                      python_frames_omitted=FramesOmitted(at=7, count=5000))
    doc = render_json.to_json(Report(target=TargetInfo(kind="live", pid=5), threads=[th]))
    (t,) = doc["threads"]
    assert len(t["python_frames"]) == 12
    assert t["python_recursion"] == [{"start": 1, "period": 1, "repeats": 6}, {"start": 7, "period": 1, "repeats": 4}]
    assert t["python_frames_omitted"] == {"at": 7, "count": 5000}
    # AND the compact line says the same
    import json
    assert json.loads(render_json.dumps(Report(target=TargetInfo(kind="live", pid=5), threads=[th]))) == json.loads(json.dumps(doc))
    whole = ThreadReport(tid=6, gdb_num=2, python_frames=_frames(["a", "b"]))
    (w,) = render_json.to_json(Report(target=TargetInfo(kind="live", pid=6), threads=[whole]))["threads"]
    assert w["python_recursion"] == [] and w["python_frames_omitted"] is None

"""The one-line JSON report, put together from its parts (distinct Python
frames encoded once), is exactly the compact json.dumps of the report's
JSON tree, on every recorded snapshot."""
import copy
import glob
import json
import os

import pytest

from pyhang import analysis
from pyhang.model.kinds import ReadPart, ReadWhy
from pyhang.model.python_values import LocalValue
from pyhang.model.unread import ReadProblem, ReadStep
from pyhang.render import json as render_json

UNREAD_LOCAL = ReadProblem(path=[ReadStep(ReadPart.STR, 0x7f20)], why=ReadWhy.UNREADABLE)

SNAPSHOTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "testdata", "snapshots")
CASES = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(SNAPSHOTS, "*.json")))


def report_of(case):
    with open(os.path.join(SNAPSHOTS, case + ".json")) as f:
        return analysis.build_report(analysis.from_snapshot(json.load(f)["snapshot"])[0])


def compact(doc):
    return json.dumps(doc, separators=(",", ":"))


@pytest.mark.parametrize("merged", [False, True])
@pytest.mark.parametrize("case", CASES)
def test_the_json_line_is_the_compact_dump_of_the_report_tree(case, merged):
    report = report_of(case)
    assert render_json.dumps(report, merged=merged) == compact(render_json.to_json(report, merged))


def test_repeated_frames_and_frames_with_locals_keep_their_own_text():
    report = report_of(CASES[0])
    thread = next(t for t in report.threads if t.python_frames)
    # the same frame many times, once with locals and a problem, once on another line
    frames = [copy.copy(thread.python_frames[0]) for _ in range(4)]
    frames[1].locals, frames[1].locals_problem = [LocalValue(name="x", kind="int", type="int", repr="1",
                                                             address=4096)], UNREAD_LOCAL
    frames[2].line += 1
    thread.python_frames = frames
    thread.python_at = {}
    text = render_json.dumps(report)
    assert text == compact(render_json.to_json(report))
    got = next(t for t in json.loads(text)["threads"] if t["tid"] == thread.tid)["python_frames"]
    assert got[0] == got[3] != got[2] and got[1]["locals"][0]["name"] == "x"
    assert got[1]["locals_problem"] == "str at 0x7f20 unreadable" and "locals" not in got[0]


def test_the_pretty_document_holds_the_same_report():
    report = report_of(CASES[0])
    assert json.loads(render_json.dumps(report, pretty=True)) == json.loads(render_json.dumps(report))

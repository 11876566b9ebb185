"""The facts interface: a Recording asks its collector each question once and
keeps the answer; its document is JSON; a Replay of it answers the same
questions with the same answers, and says which it could not answer."""
import glob
import json
import os
from collections.abc import Sequence

import pytest

import harness

from pyhang import cli
from pyhang.analysis.report import analyse, from_snapshot
from pyhang.model.facts import Facts, Recording, Replay, ThreadFacts, decode, encode, frame_sequence
from pyhang.model.fork_facts import ForkFacts, ForkIssue
from pyhang.model.glibc_kinds import LockEvidence
from pyhang.model.kinds import ForkProblem, TargetWarning
from pyhang.model.python_facts import PyFrameFacts, PyThreadFacts, PythonState
from pyhang.model.record import to_data
from pyhang.model.target_facts import TargetFacts
from pyhang.model.report import NativeFrame
from pyhang.model.waits import GlibcLock, HowIdentified, LockIdentification
from pyhang.render.text import warnings

SNAPSHOTS = os.path.join(os.path.dirname(__file__), "..", "..", "testdata", "snapshots")


class NativeLikeFrames(Sequence):
    """A sequence of the kind the native module gives (a Sequence of PyFrameFacts, not a list)."""

    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]

    def __eq__(self, other):   # as the native Frames: equal to the list of its frames
        return isinstance(other, Sequence) and list(self) == list(other)

    def keys(self):   # the native Frames has keys(): its frames' cache keys, not a mapping's
        return [0] * len(self.items)


class Counting(Facts):
    """A collector of one process with two threads: thread 11 parked on a
    pthread mutex thread 12 holds, thread 12 running; no Python."""

    def __init__(self):
        self.calls = []

    def _called(self, name, *args):
        self.calls.append((name, args))

    def target(self):
        self._called("target")
        return TargetFacts(kind="live", pid=10, executable="/bin/prog", parent_pid=1, warnings=[{"kind": TargetWarning.NO_EXECUTABLE_GIVEN}])

    def python(self):
        self._called("python")
        frames = NativeLikeFrames([PyFrameFacts(function="f", file="a.py", line=3)])
        return PythonState(status="not-python", threads=[PyThreadFacts(tstate=1, native_tid=99, frames=frames)])

    def threads(self, depth, tids=None):
        self._called("threads", depth, tids)
        lock_frames = [NativeFrame(pc=0x1000, function="__lll_lock_wait", library="/lib/libc.so.6", offset=4),
                       NativeFrame(pc=0x2000, function="main", library="/bin/prog", offset=8)]
        out = [ThreadFacts(num=1, tid=11, name="prog", registers={"orig_rax": 202, "rdi": 0x5000, "fs_base": 0x7000},
                           frames=lock_frames),
               ThreadFacts(num=2, tid=12, name="prog", registers={"fs_base": 0x8000},
                           frames=[NativeFrame(pc=0x2100, function="work", library="/bin/prog")])]
        return [t for t in out if tids is None or t.tid in tids]

    def locks(self, tids):
        self._called("locks", tids)
        mutex = LockIdentification(kind="mutex", address=0x5000, owners=[12], owner_source="lock-word",
                                   confidence="certain", evidence=HowIdentified(LockEvidence.LOCK_ARGUMENT),
                                   lock=GlibcLock(kind="mutex"), library="/bin/prog")
        return [[tid, mutex if tid == 11 else LockIdentification()] for tid in tids]

    def fork_facts(self, bases):
        self._called("fork_facts", bases)
        return ForkFacts(descriptor_issue=ForkIssue(ForkProblem.MAPPINGS_UNKNOWN))


def test_a_recording_asks_each_question_once_and_its_document_is_json():
    source = Counting()
    recording = Recording(source)
    recording.threads(8)
    recording.threads(8)
    recording.locks([11])
    assert [c[0] for c in source.calls] == ["threads", "locks"]
    assert recording.asked == {"threads": 1, "locks": 1}
    recording.python()
    document = recording.to_dict({"native_depth": 8})
    # native-like sequences become lists; the document survives JSON unchanged
    assert json.loads(json.dumps(document)) == document
    python = next(a for q, _, a in document["answers"] if q == "python")
    assert python["threads"][0]["frames"] == [to_data(PyFrameFacts(function="f", file="a.py", line=3))]
    assert Replay(document).python() == recording.python()


def test_a_replay_gives_back_every_answer_records_included():
    recording = Recording(Counting())
    original = recording.threads(8)
    recording.locks([11])
    replay = Replay(json.loads(json.dumps(recording.to_dict())))
    assert replay.threads(8) == original
    assert isinstance(replay.threads(8)[0].frames[0], NativeFrame)
    assert replay.locks([11]) == [[11, recording.locks([11])[0][1]]]
    assert replay.unanswered == []


def test_a_replay_answers_an_unrecorded_question_as_not_known_and_lists_it():
    replay = Replay(Recording(Counting()).to_dict())
    assert replay.locks([99]) is None
    assert len(replay.unanswered) == 1


def test_a_replay_refuses_a_document_of_another_kind():
    with pytest.raises(ValueError):
        Replay({"schema": "pyhang-report/1"})


def test_a_snapshot_of_the_first_format_is_refused_in_one_line(tmp_path, capsys):
    # GIVEN a pyhang-snapshot/1 document (what was assembled, as the first pyhang snapshots held it)
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"schema": "pyhang-snapshot/1", "target": {"kind": "live", "pid": 5}, "threads": []}))
    # THEN the command line says it is not a snapshot it reads, and fails
    assert cli.main(["report", "--snapshot", str(path)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "is not one pyhang wrote" in line and "pyhang-snapshot/2" in line


def test_the_analysis_gives_the_same_report_from_the_collector_and_from_its_snapshot():
    recording = Recording(Counting())
    _, live = analyse(recording, native_depth=8)
    assert [(e.waiter, e.owner) for e in live.edges] == [(11, 12)]
    document = json.loads(json.dumps(recording.to_dict({"native_depth": 8})))
    _, again = from_snapshot(document)
    assert again == live


def test_a_snapshot_missing_answers_says_so_in_the_report():
    recording = Recording(Counting())
    analyse(recording, native_depth=8)
    document = recording.to_dict({"native_depth": 8})
    document["answers"] = [a for a in document["answers"] if a[0] != "locks"]
    _, report = from_snapshot(document)
    assert report.edges == []
    assert report.unanswered == 1
    assert any("no answer to 1 of the questions" in w for w in warnings(report))


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(SNAPSHOTS, "*.json"))), ids=os.path.basename)
def test_every_recorded_answer_decodes_to_records_that_give_back_every_key(path):
    with open(path) as f:
        document = json.load(f)["snapshot"]
    for question, _, data in document["answers"]:
        again = json.loads(json.dumps(encode(question, decode(question, data)), default=frame_sequence))
        assert harness.kept(data, again), question
        assert decode(question, again) == decode(question, data), question
    state = Replay(document).python()
    assert isinstance(state, PythonState) and all(isinstance(t, PyThreadFacts) for t in state.threads)

"""What about a target could not be read comes from the native reader and
the collectors as data (model.kinds.TargetWarning and what it names) and is
worded by render.target: every kind has words naming its paths, numbers and
threads, and the native kinds are the vocabulary's."""
import pytest

import _pyhang_native as native
from pyhang.model import kinds
from pyhang.model.warning_facts import warning_of
from pyhang.render.target import object_problem_text, reader_error_text, reader_failure, warning_text


def said(data):
    """A warning's data (a snapshot's) in words: its record's."""
    return warning_text(warning_of(data))

EXAMPLE = {"path": "/tmp/core.1", "number": 3, "other": 8, "text": "no .dynsym", "other_text": "ab12",
           "problem": {"path": [{"part": kinds.ReadPart.FRAME, "address": 0x10}], "why": kinds.ReadWhy.UNREADABLE},
           "given": "/usr/bin/python3", "tids": [11, 12], "tid": 11,
           "call": "write", "fd": 2, "what": "pipe"}


def members():
    return {v for k, v in vars(kinds.TargetWarning).items() if k.isupper()}


def test_the_native_readers_kinds_are_the_vocabularys():
    native_kinds = {m.text for m in native.TargetProblem.__members__.values()}
    assert len(native_kinds) == 6 and native_kinds <= members()


def test_every_reason_a_target_cannot_be_opened_is_the_native_name_table_and_has_words():
    failures = {v for k, v in vars(kinds.ReaderFailure).items() if k.isupper()}
    assert failures == {m.text for m in native.ErrorReason.__members__.values()}
    for reason in failures:
        words = reader_failure(reason, "/tmp/x.so", 2)
        assert words and reason not in words, reason
    assert reader_failure(kinds.ReaderFailure.CANNOT_OPEN, "/tmp/x.so", 2) == \
        "cannot open /tmp/x.so: No such file or directory"


def test_a_reader_error_is_worded_from_its_reason_path_and_number():
    with pytest.raises(native.ReaderError) as e:
        native.Target.core("/nonexistent/core.1", "", "", [])
    assert e.value.reason == native.ErrorReason.CANNOT_OPEN and e.value.path == "/nonexistent/core.1"
    assert reader_error_text(e.value) == "cannot open /nonexistent/core.1: No such file or directory"
    assert reader_error_text(ValueError("other")) == "other"


def test_a_mapped_file_that_cannot_be_read_or_is_another_build_is_said_with_its_reason():
    missing = {"kind": kinds.TargetWarning.SYMBOLS_UNREADABLE, "path": "/usr/lib/libx.so", "number": 2,
               "text": "cannot-open", "other_text": "/sysroot/usr/lib/libx.so"}
    assert said(missing) == ("cannot read symbols of /usr/lib/libx.so: cannot open /sysroot/usr/lib/libx.so: "
                                     "No such file or directory")
    other = {"kind": kinds.TargetWarning.BUILD_ID_MISMATCH, "path": "/usr/lib/libx.so", "text": "ab12",
             "other_text": "cd34"}
    assert "build-id ab12, in the core cd34" in said(other)
    # damaged data is said by its names, never raised
    assert object_problem_text(warning_of({"kind": kinds.TargetWarning.BUILD_ID_MISMATCH})).startswith(
        "the file on disk is not the one the core was made from (build-id ?")
    assert object_problem_text(warning_of({"kind": "symbols-unreadable", "text": "cannot-open", "number": "x"})) == \
        "cannot-open: ?"
    assert reader_failure(kinds.ReaderFailure.NO_SUCH_PROCESS, "/proc/1", None) == "no-such-process: /proc/1"


def test_every_kind_has_words_with_what_it_names():
    for kind in members():
        words = said(dict(EXAMPLE, kind=kind))
        assert words and kind not in words, kind
    truncated = said(dict(EXAMPLE, kind=kinds.TargetWarning.CORE_TRUNCATED))
    assert "/tmp/core.1" in truncated and "3 of 8 bytes" in truncated
    assert "LWP 11, 12" in said(dict(EXAMPLE, kind=kinds.TargetWarning.ZEROED_STACKS))
    assert "LWP 11 is inside write on fd 2" in said(dict(EXAMPLE, kind=kinds.TargetWarning.NOT_STOPPED_FOR_TRANSFER))


def test_a_warning_of_damaged_data_is_said_by_its_kind_not_raised():
    # data another pyhang wrote, or a damaged snapshot: what it lacks takes its record's defaults, and a value
    # its words cannot take leaves one line of the kind and what it names, never a traceback
    assert said({"kind": kinds.TargetWarning.CORE_TRUNCATED, "path": "/tmp/core.1", "number": "many"}) == \
        "core-truncated: /tmp/core.1"
    assert said({"kind": kinds.StateWarning.THREAD_PREV_MISMATCH, "address": None}).startswith("thread-prev-mismatch")
    assert said({"kind": kinds.TargetWarning.CORE_NO_THREAD}) == "core file  has no thread (no NT_PRSTATUS note)"


def test_what_a_collector_could_not_read_about_a_thread_is_data_worded_by_render():
    from pyhang.model.report import ThreadIssue, thread_issues
    from pyhang.render.names import thread_issues_text
    every = [ThreadIssue(kind, number=3, other=4, text="bad-cfa") for k, kind in vars(kinds.ThreadIssueKind).items()
             if k.isupper()]
    for issue in every:
        words = thread_issues_text([issue])
        assert words and words != issue.kind, issue.kind   # each kind has words of its own, not its name
    assert thread_issues_text(every[:2]) == thread_issues_text(every[:1]) + "; " + thread_issues_text(every[1:2])
    assert thread_issues_text([ThreadIssue(kinds.ThreadIssueKind.STACK_CUT, number=1, text="bad-cfa")]).startswith(
        "its native stack ends after 1 frame: the unwinder stopped (bad-cfa)")
    assert thread_issues_text([ThreadIssue(kinds.ThreadIssueKind.LISTED_TWICE, number=7, other=1007)]) == (
        "gdb lists this thread twice: as LWP 7 (the TID in its PID namespace) and as LWP 1007 (the host's); only "
        "the second has registers")
    # a snapshot's data round-trips
    assert thread_issues([{"kind": "running", "number": 0, "other": 0, "text": ""}]) == \
        [ThreadIssue(kinds.ThreadIssueKind.RUNNING)]
    assert thread_issues_text(None) is None and thread_issues([]) is None
    assert thread_issues_text([ThreadIssue(kinds.ThreadIssueKind.STACK_CUT, number="x")]) == "stack-cut"

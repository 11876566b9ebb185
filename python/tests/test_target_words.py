"""What about a target could not be read comes from the native reader and
the collectors as data (model.kinds.TargetWarning and what it names) and is
worded by render.target: every kind has words naming its paths, numbers and
threads, the native kinds are the vocabulary's, and a warning that is a
string (an older snapshot's, the interpreter reader's) is shown as it is."""
import _pyhang_native as native
from pyhang.model import kinds
from pyhang.render.target import warning_text

EXAMPLE = {"path": "/tmp/core.1", "number": 3, "other": 8, "text": "no .dynsym", "given": "/usr/bin/python3",
           "tids": [11, 12], "tid": 11, "call": "write", "fd": 2, "what": "pipe"}


def members():
    return {v for k, v in vars(kinds.TargetWarning).items() if k.isupper()}


def test_the_native_readers_kinds_are_the_vocabularys():
    native_kinds = {m.text for m in native.TargetProblem.__members__.values()}
    assert len(native_kinds) == 5 and native_kinds <= members()


def test_every_kind_has_words_with_what_it_names():
    for kind in members():
        words = warning_text(dict(EXAMPLE, kind=kind))
        assert words and kind not in words, kind
    truncated = warning_text(dict(EXAMPLE, kind=kinds.TargetWarning.CORE_TRUNCATED))
    assert "/tmp/core.1" in truncated and "3 of 8 bytes" in truncated
    assert "LWP 11, 12" in warning_text(dict(EXAMPLE, kind=kinds.TargetWarning.ZEROED_STACKS))
    assert "LWP 11 is inside write on fd 2" in warning_text(dict(EXAMPLE, kind=kinds.TargetWarning.NOT_STOPPED_FOR_TRANSFER))


def test_a_warning_that_is_a_string_is_shown_as_it_is():
    assert warning_text("core file x is truncated: 1 of 2 bytes") == "core file x is truncated: 1 of 2 bytes"


def test_a_warning_missing_what_its_kind_names_is_said_by_its_kind_not_raised():
    # data another pyhang wrote, or a damaged snapshot: one line, never a traceback
    assert warning_text({"kind": kinds.TargetWarning.CORE_TRUNCATED, "path": "/tmp/core.1"}) == \
        "core-truncated: /tmp/core.1"
    assert warning_text({"kind": kinds.StateWarning.THREAD_PREV_MISMATCH}).startswith("thread-prev-mismatch")

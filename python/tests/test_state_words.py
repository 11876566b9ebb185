"""What about the interpreter's state could not be read comes from the
native reader as data (model.kinds.StateWarning and the addresses, numbers
and text it names) and is worded by render.interpreter: the vocabulary is
the native name table, and every kind has words naming what it carries."""
import _pyhang_native as native
from pyhang.model import kinds
from pyhang.model.warning_facts import warning_of
from pyhang.render.target import warning_text


def said(data):
    """A warning's data (a snapshot's) in words: its record's."""
    return warning_text(warning_of(data))

EXAMPLE = {"address": 0x1000, "other": 0x2000, "expected": 0x3000, "number": 7, "count": 0, "text": "3.16.0",
           "text2": "3.16", "text3": "3.15.2", "changes": [{"name": "task_node", "was": 152, "now": 176}]}


def members():
    return {v for k, v in vars(kinds.StateWarning).items() if k.isupper()}


def test_the_vocabulary_is_the_native_name_table():
    assert members() == {m.text for m in native.StateProblem.__members__.values()}


def test_every_kind_has_words_with_what_it_carries():
    for kind in members():
        words = said(dict(EXAMPLE, kind=kind))
        assert words and not words.startswith(kind + ":"), kind   # not the fallback for unknown kinds
    mismatch = said(dict(EXAMPLE, kind=kinds.StateWarning.THREAD_OF_OTHER_INTERPRETER))
    assert "0x1000" in mismatch and "0x2000" in mismatch and "expected 0x3000" in mismatch


def test_a_debug_offsets_problem_says_whether_the_generated_table_stands_in_or_nothing_does():
    used = said(dict(EXAMPLE, kind=kinds.StateWarning.DEBUG_OFFSETS_NO_COOKIE))
    refused = said(dict(EXAMPLE, kind=kinds.StateWarning.DEBUG_OFFSETS_NO_COOKIE, count=1))
    assert "using the generated 3.15.2 table" in used
    assert "no layout table for CPython 3.16 to fall back on" in refused


def test_a_warning_that_is_a_string_is_shown_as_it_is():
    assert warning_text("layout mismatch? GIL at 0x1 has locked = 5") == "layout mismatch? GIL at 0x1 has locked = 5"


def test_the_gil_decoders_notes_are_problems_worded_after_what_was_not_decoded():
    note = {"path": [{"part": kinds.ReadPart.FUNCTION, "address": 0x1000, "name": "PyEval_InitThreads",
                      "number": 0}], "why": kinds.ReadWhy.UNDECODABLE, "number": 12, "limit": 1, "at": 0, "name": "",
            "count": 0}
    w = dict(EXAMPLE, kind=kinds.StateWarning.GIL_STATICS_UNDECODED, text="/lib/libpython3.6m.so",
             text2="mutex+condition-variable", text3="", notes=[note])
    assert said(w) == (
        "could not decode the GIL's mutex and condition variable in /lib/libpython3.6m.so; threads waiting for the "
        "GIL will not be recognised; GIL decode: cannot decode PyEval_InitThreads at +12 (code truncated)")
    bare = dict(w, text2="mutex", notes=None)
    assert said(bare) == ("could not decode the GIL's mutex in /lib/libpython3.6m.so; threads waiting for the "
                                  "GIL will not be recognised")


def test_asyncios_own_debug_offsets_are_worded_with_the_struct_the_fields_and_the_row():
    base = {"address": 0x7f00, "other": 0, "expected": 0, "count": 168, "text": "3.14", "text2": "task_coro",
            "text3": "_AsyncioDebug"}
    assert said(dict(base, kind=kinds.StateWarning.ASYNCIO_DEBUG_IMPLAUSIBLE, number=500)) == \
        "asyncio: _AsyncioDebug at 0x7f00 implausible (task_coro 500 outside its struct of 168 bytes); using the 3.14 row"
    assert said(dict(base, kind=kinds.StateWarning.ASYNCIO_DEBUG_IMPLAUSIBLE, number=-1)) == \
        "asyncio: _AsyncioDebug at 0x7f00 implausible (task_coro unreadable); using the 3.14 row"
    assert said(dict(base, kind=kinds.StateWarning.ASYNCIO_DEBUG_UNREADABLE, number=0)) == \
        "asyncio: _AsyncioDebug at 0x7f00 unreadable; using the 3.14 row"
    differ = dict(base, kind=kinds.StateWarning.ASYNCIO_DEBUG_DIFFER, number=0, text3="_Py_DebugOffsets",
                  changes=[{"name": "gi_iframe", "was": 72, "now": 88}, {"name": "gi_frame_state", "was": 67, "now": 66}])
    assert said(differ) == ("asyncio: the target's _Py_DebugOffsets differ from the 3.14 row in gi_iframe "
                                    "72->88, gi_frame_state 67->66; using the target's")

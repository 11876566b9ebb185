"""What a CPython object or frame reader could not read comes from the
native readers as data (model.unread.ReadProblem: a path of
model.kinds.ReadPart steps and a model.kinds.ReadWhy) and is worded by
render.unread: the vocabularies are the native name tables, every kind has
words, and a path reads as the sentence the readers used to write."""
import _pyhang_native as native
from pyhang.model import kinds
from pyhang.model.record import from_data, to_data
from pyhang.model.unread import ReadProblem, ReadStep
from pyhang.render.unread import unread_text


def members(cls):
    return {v for k, v in vars(cls).items() if k.isupper()}


def step(part, address=0, name="", number=0):
    return {"part": part, "address": address, "name": name, "number": number}


def problem(why, *path, **facts):
    return dict({"path": list(path), "why": why, "number": None, "limit": 0, "at": 0, "name": "", "count": 0},
                **facts)


P, W = kinds.ReadPart, kinds.ReadWhy


def test_the_vocabularies_are_the_native_name_tables():
    assert members(P) == {m.text for m in native.ReadPart.__members__.values()}
    assert members(W) == {m.text for m in native.ReadWhy.__members__.values()}


def test_every_why_has_words_of_its_own_about_any_part():
    for why in members(W):
        for part in members(P):
            words = unread_text(problem(why, step(P.FRAME, 0x10), step(part, 0x20, "x", 7), number=3, limit=4,
                                        at=0x30, name="n"))
            assert words and not words.endswith(": " + why), (why, part, words)   # not the fallback


def test_every_part_names_itself_in_a_path():
    for part in members(P):
        words = unread_text(problem(W.UNREADABLE, step(part, 0x20, "x", 7)))
        assert words.endswith(" unreadable") and part + " 0x20" not in words, (part, words)   # not the fallback


def test_a_path_reads_as_the_sentence_the_readers_wrote():
    unreadable_name = problem(W.UNREADABLE, step(P.FRAME, 0x100), step(P.CODE_OBJECT, 0x200), step(P.FIELD, name="name"),
                              step(P.STR, 0x300), count=2)
    assert unread_text(unreadable_name) == ("frame at 0x100: code object at 0x200: name: str at 0x300 unreadable "
                                            "(2 frames with unreadable code in all)")
    assert unread_text(problem(W.NOT_A, step(P.CODE_OBJECT, 0x200), name="dict")) == "0x200 is not a code object (dict)"
    assert unread_text(problem(W.IMPLAUSIBLE, step(P.STR, 0x300), name="length", number=5)) == \
        "str at 0x300: length 5 implausible"
    assert unread_text(problem(W.LOOPS, step(P.FRAME), at=0x40)) == "frame chain loops at 0x40"
    assert unread_text(problem(W.STOPPED_AFTER, step(P.FRAME), limit=10000)) == "stopped after 10000 frames"
    assert unread_text(problem(W.LOOPS, step(P.THREAD_TASK_LIST, 0x50, number=100), step(P.TASK_NODE), at=0x60)) == \
        "the task list of LWP 100 loops at 0x60"
    assert unread_text(problem(W.STOPPED_AFTER, step(P.THREAD_TASK_LIST, 0x50, number=100), step(P.TASK),
                               limit=3)) == "the task list of LWP 100 stopped after 3 tasks"
    assert unread_text(problem(W.LOOPS, step(P.COROUTINE, 0x90), step(P.FRAME), at=0x40)) == \
        "coroutine at 0x90: frame chain loops at 0x40"
    assert unread_text(problem(W.NOT_IMPORTED, step(P.MODULE), name="threading")) == "module threading is not imported"
    assert unread_text(problem(W.NO_KEY, step(P.DICT, 0x70), name="_lock")) == "no key '_lock' in dict 0x70"
    assert unread_text(problem(W.NO_LAYOUT, step(P.OBJECT), name="3.99.0")) == "no object layout for CPython 3.99.0"
    assert unread_text(problem(W.NO_PYTHON_STATE, name="starting")) == "no Python state (starting)"
    assert unread_text(problem(W.READ_LIMIT, limit=512)) == "read limit of 512 reads reached"
    assert unread_text(problem(W.NOT_FOUND, step(P.THREAD, number=7), step(P.FRAME))) == "thread 7 has no Python frames"
    assert unread_text(problem(W.NOT_FOUND, step(P.LOCK), at=0x80, number=2, limit=4)) == (
        "futex 0x80 is in none of the 2 Python lock objects the innermost 4 frames reference")


def test_what_the_native_module_hands_reads_the_same_as_its_record():
    data = problem(W.UNREADABLE, step(P.CODE_OBJECT, 0x200))
    record = from_data(ReadProblem, data)
    assert record.path == [ReadStep(P.CODE_OBJECT, 0x200)]
    assert unread_text(record) == unread_text(data) == "code object at 0x200 unreadable"
    assert to_data(record) == data


def test_no_problem_is_no_words():
    assert unread_text(None) is None and unread_text([]) is None

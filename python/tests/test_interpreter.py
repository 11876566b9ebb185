"""_pyhang_native.Interpreter: the interpreter read once and handed to the
other decoders gives what each entry point gives on its own, and the type
stub python/_pyhang_native.pyi is what the module generates, and the native
name tables are the model's vocabularies."""
import ast
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testdata"))

import harness  # noqa: E402

sys.path.insert(0, os.path.join(harness.build_dir(), "python"))
native = pytest.importorskip("_pyhang_native")


def test_the_stub_is_what_the_module_as_built_generates():
    # python/_pyhang_native.pyi is never edited by hand: python/tools/gen_stub.py writes it from the bindings
    sys.path.insert(0, os.path.join(ROOT, "python", "tools"))
    import gen_stub
    with open(os.path.join(ROOT, "python", "_pyhang_native.pyi")) as f:
        kept = f.read()
    assert kept == gen_stub.stub(native), "run python/tools/gen_stub.py (its doc says how)"
    tree = ast.parse(kept)
    named = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert {n for n in dir(native) if not n.startswith("_")} <= named


def test_the_vocabularies_of_the_model_are_the_native_name_tables():
    from pyhang.model import kinds
    # each kind the decoders give is one the model (and the JSON contract) names
    pairs = [(native.LockType, kinds.GlibcLockKind), (native.LockFlag, kinds.LockFlag),
             (native.WaitKind, kinds.WaitKind), (native.PyLockKind, kinds.WaitKind),
             (native.OwnerSource, kinds.OwnerSource), (native.Confidence, kinds.Confidence),
             (native.Status, kinds.PythonStatus), (native.LocalKind, kinds.LocalKind)]
    for enum, vocabulary in pairs:
        values = {v for k, v in vars(vocabulary).items() if k.isupper() and isinstance(v, str)}
        texts = {m.text for m in enum.__members__.values()} - {""}
        assert texts <= values, (enum.__name__, sorted(texts - values))
    # and the glibc ones are the whole table, both ways
    for enum, vocabulary in pairs[:2]:
        values = {v for k, v in vars(vocabulary).items() if k.isupper()}
        assert values == {m.text for m in enum.__members__.values()} - {""}


def test_every_enum_member_carries_the_string_of_its_name_table():
    assert native.WaitKind.RWLOCK_READ.text == "rwlock-read"
    assert native.PyLockKind.PY_CONDITION.text == "py-condition"
    assert native.Confidence.NONE.text == ""
    assert native.Status.NOT_PYTHON.text == "not-python"
    assert native.OwnerSource.LOCK_WORD.text == "lock-word"
    assert native.frame_hint("__pthread_rwlock_wrlock_full64") == native.WaitKind.RWLOCK_WRITE.text


def test_a_missing_process_is_a_reader_error_with_its_reason():
    with pytest.raises(native.ReaderError) as e:
        native.Target.live(0x3FFFFFFF)
    assert e.value.reason == native.ErrorReason.NO_SUCH_PROCESS


def test_one_interpreter_serves_state_locks_fork_facts_and_values():
    with harness.python_scenario(sys.executable, "py_locks.py") as s:
        target = native.Target.live(s.pid)
        interp = native.Interpreter(target)
        state = interp.state()
        assert state == native.python_state(target)
        assert interp.status == native.Status.OK and state.status == "ok"
        shared, own = native.PythonLocks(interp), native.PythonLocks(target)
        assert shared.status == own.status == "ok"
        waits = {}
        for t in s.truth["threads"]:
            a, b = shared.wait(t["tid"]), own.wait(t["tid"])
            assert a == b, (t, a, b)
            assert native.python_lock_wait(target, interp, t["tid"]) == a
            waits[t["role"]] = a
        assert waits["lock-waiter"].kind == "py-lock"
        assert waits["rlock-waiter"].kind == "py-rlock"
        alone, reused = native.fork_facts(target, [], True), native.fork_facts(target, [], True, interp)
        assert alone.python == reused.python
        assert native.python_value(target, "threading", "_active") == \
            native.python_value(target, "threading", "_active", interpreter=interp)


def test_the_batch_questions_answer_as_the_questions_of_one_thread_each():
    with harness.python_scenario(sys.executable, "py_locks.py") as s:
        target = native.Target.live(s.pid)
        interp = native.Interpreter(target)
        locks, reader = native.PythonLocks(interp), native.LockReader(target, None)
        tids = [t["tid"] for t in s.truth["threads"]]
        parked = {tid: native.parked_registers(target, tid) for tid in tids}
        futexes = [(tid, parked[tid].registers.get("rdi") if parked[tid] else None) for tid in tids]
        assert locks.waits(futexes) == [locks.wait(tid, futex) for tid, futex in futexes]
        assert locks.frame_selves_of(tids) == [locks.frame_selves(tid) for tid in tids]
        asked = [(tid, dict(parked[tid].registers) if parked[tid] else None, []) for tid in tids]
        assert reader.identify_all(asked) == [reader.identify(tid, regs, frames) for tid, regs, frames in asked]
        assert reader.identify_all([]) == [] and locks.waits([]) == [] and locks.frame_selves_of([]) == []
        with pytest.raises(ValueError):
            reader.identify_all([(tids[0], None)])
        # A read kept as digests has no frames, and finds no thread moved in a process that stands still.
        again = native.Interpreter(target, digest_frames=True)
        assert all(not t.frames for t in again.state().threads)
        assert any(t.frames for t in interp.state().threads)
        assert native.state_moves(interp, again).moved == []


def test_a_threads_frames_are_a_sequence_of_frame_records_made_when_asked():
    from collections.abc import Sequence
    from pyhang.model.facts import frame_sequence
    from pyhang.model.python_facts import PyFrameFacts
    from pyhang.model.record import to_data
    import json
    with harness.python_scenario(sys.executable, "py_locks.py") as s:
        state = native.Interpreter(native.Target.live(s.pid)).state()
    # The Interpreter is gone: the frames keep what they need alive.
    threads = [t for t in state.threads if t.frames]
    assert len(threads) >= 3
    keys_seen = {}
    for t in threads:
        frames = t.frames
        every = frames.list()
        assert isinstance(frames, Sequence) and len(frames) == len(every) and bool(frames)
        assert list(frames) == every and frames == every
        assert frames[0] == every[0] and frames[-1] == every[-1]
        assert frames[1:3] == every[1:3] and frames[::-1] == every[::-1]
        with pytest.raises(IndexError):
            frames[len(every)]
        assert all(type(f) is PyFrameFacts for f in every)
        keys = frames.keys()
        assert keys == [(f.function, f.file, f.line, f.entry_frame, f.end_line, f.col, f.end_col, f.c_call)
                        for f in every]
        for k in keys:
            if k[-1] is None:   # a frame that calls C has a key of its own
                assert keys_seen.setdefault(k, k) is k  # one tuple for equal frames, across threads
    # threading's bootstrap frames are the same in every thread it started
    assert any(k[0].endswith("_bootstrap") for k in keys_seen)
    # a snapshot holds plain lists (a C callable's tuple becomes a JSON list)
    plain = json.loads(json.dumps(to_data(state), default=frame_sequence))
    assert [t["frames"] for t in plain["threads"] if t["frames"]] == \
        json.loads(json.dumps([to_data(t.frames.list()) for t in threads]))


@pytest.mark.parametrize("python", harness.interpreters(), ids=[name for name, _ in harness.interpreters()])
def test_the_layout_table_used_says_how_it_relates_to_the_release_the_process_recorded(python):
    # GIVEN a process of each interpreter here (Debian's, pyenv's, today's in their roots), stripped
    exe, env = harness.stripped_interpreter(python[1])
    with harness.python_scenario(exe, "many_threads.py", "1", "1", env=env) as s:
        state = native.Interpreter(native.Target.live(s.pid)).state()
    # THEN the version is the one it recorded; a table of that release is "generated", one of another patch
    # level says whether its headers were probed identical; 3.13+ are corrected by their _Py_DebugOffsets
    assert state.status == "ok" and state.version == s.truth["python"]
    if state.layout == state.version:
        assert state.layout_basis == native.LayoutBasis.GENERATED.text
    else:
        assert state.layout_basis in (native.LayoutBasis.PROBED_IDENTICAL.text, native.LayoutBasis.NOT_PROBED.text)
    minor = tuple(int(x) for x in s.truth["python"].split(".")[:2])
    assert state.layout_debug_offsets == (minor >= (3, 13))

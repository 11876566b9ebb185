"""What the native module finds of a Python process's objects crosses as
the records of pyhang.model, made in C++ (python/records.hpp; the tables of
python/bind_pylocks.cpp and python/bind_values.cpp): the lock a thread waits
on, the `self` of its frames, attributes, module values, a frame's locals,
threading's Thread objects, what is at a lock's address and which threads
and variables reach an object.  Each is the model's record, equal to what
its own data (a snapshot's) gives back.  Asked of python3.11 running
testdata/scenarios/py_locks.py (threads waiting on a Lock, an RLock and
Conditions whose owners it records), read without stopping it."""
import json
import os

import pytest

import _pyhang_native as native

import harness
from pyhang.model.lock_objects import LockObject, LockReference
from pyhang.model.python_values import FrameLocals, LocalValue, ObjectValue
from pyhang.model.record import from_data, to_data
from pyhang.model.references import ObjectPath, ThreadReferences
from pyhang.model.threading_facts import ThreadingState, ThreadObject
from pyhang.model.unread import ReadProblem
from pyhang.model.waits import CodeLine, FrameSelf, PythonLockWait

PY = "/usr/bin/python3.11"


def assert_record(cls, value):
    """`value` is a record of `cls`, and its data gives it back."""
    assert type(value) is cls, value
    assert from_data(cls, json.loads(json.dumps(to_data(value)))) == value


@pytest.fixture(scope="module")
def py_locks():
    """(the scenario's threads by role, its Target, an Interpreter of it read once)."""
    if not os.path.exists(PY):
        pytest.skip("no %s" % PY)
    with harness.python_scenario(PY, "py_locks.py") as s:
        target = native.Target.live(s.pid)
        roles = {}
        for t in s.truth["threads"]:
            roles.setdefault(t["role"], t)   # the first of the Condition waiters: COND's
        yield roles, target, native.Interpreter(target)


def innermost_frame(interp, tid):
    (thread,) = [t for t in interp.state().threads if t.native_tid == tid]
    return thread.frames[0]


def test_threads_waiting_on_a_lock_and_an_rlock_cross_as_python_lock_wait_records(py_locks):
    roles, target, interp = py_locks
    locks = native.PythonLocks(interp)
    # WHEN the waits of the Lock's and the RLock's waiters are asked
    lock, rlock = locks.wait(roles["lock-waiter"]["tid"]), locks.wait(roles["rlock-waiter"]["tid"])
    # THEN each is a PythonLockWait on its lock, found in the waiter's frame, a CodeLine record
    for wait, role in ((lock, "lock-waiter"), (rlock, "rlock-waiter")):
        assert_record(PythonLockWait, wait)
        assert wait.object == roles[role]["lock_id"] and wait.type_name == roles[role]["lock_type"]
        assert type(wait.frame) is CodeLine and wait.frame.function == role.replace("-", "_")
        assert all(type(f) is CodeLine for f in wait.suspect_frames + wait.self_frames)
        assert wait.problem is None or type(wait.problem) is ReadProblem
    # AND the Lock's holder is its suspect, the RLock's the owner its lock word records, with its count
    assert (lock.kind, lock.locked, lock.suspects) == ("py-lock", True, [roles["lock-waiter"]["holder_tid"]])
    assert (rlock.kind, rlock.owner_tid, rlock.count, rlock.owner_source) == \
        ("py-rlock", roles["rlock-waiter"]["holder_tid"], 2, "lock-word")
    # AND python_lock_wait() gives the same record
    assert native.python_lock_wait(target, interp, roles["lock-waiter"]["tid"]) == lock


def test_the_self_of_a_method_frame_is_a_frame_self_record(py_locks):
    roles, _, interp = py_locks
    waiter = roles["cond-waiter"]
    # WHEN the selves of the Condition waiter's innermost frames are asked
    selves = native.PythonLocks(interp).frame_selves(waiter["tid"])
    # THEN each is a FrameSelf, and Condition.wait's (innermost) is the Condition
    assert selves
    for s in selves:
        assert_record(FrameSelf, s)
    assert (selves[0].index, selves[0].object, selves[0].type, selves[0].function) == \
        (0, waiter["condition_id"], "Condition", "Condition.wait")


def test_attributes_are_object_value_records_and_one_missing_is_none(py_locks):
    roles, _, interp = py_locks
    waiter = roles["cond-waiter"]
    # WHEN the Condition's attributes are asked, with one it does not have
    found = native.PythonLocks(interp).attributes(waiter["condition_id"], ["_lock", "_waiters", "no_such"])
    # THEN each it has is an ObjectValue, and the one it has not is None
    assert sorted(found) == ["_lock", "_waiters", "no_such"] and found["no_such"] is None
    assert_record(ObjectValue, found["_lock"])
    assert_record(ObjectValue, found["_waiters"])
    assert (found["_lock"].address, found["_lock"].type) == (waiter["condition_lock_id"], waiter["condition_lock_type"])
    # AND its deque of waiters has the length value() does not give a deque: the one waiter
    assert (found["_waiters"].type, found["_waiters"].length) == ("collections.deque", 1)


def test_a_module_value_is_an_object_value_and_one_not_found_says_why(py_locks):
    _, target, interp = py_locks
    # WHEN a global of __main__ (the dict of the three holders' TIDs) and one of a module never imported are asked
    tids = native.python_value(target, "__main__", "tids", interpreter=interp)
    missing = native.python_value(target, "no_such_module", "x", interpreter=interp)
    # THEN the first is the dict, an ObjectValue with its length
    assert_record(ObjectValue, tids)
    assert (tids.type, tids.kind, tids.length) == ("dict", "dict", 3)
    # AND the second an unreadable ObjectValue whose problem is the ReadProblem of why
    assert_record(ObjectValue, missing)
    assert missing.kind == "unreadable" and type(missing.problem) is ReadProblem
    assert missing.problem.why == "not-imported"


def test_a_frames_locals_are_named_local_value_records_and_a_value_alone_is_one_unnamed(py_locks):
    roles, _, interp = py_locks
    waiter = roles["cond-waiter"]
    frame = innermost_frame(interp, waiter["tid"])
    values = native.PythonValues(interp)
    # WHEN the locals of Condition.wait's frame are asked
    fl = values.frame_locals(frame.frame, frame.code)
    # THEN they are a FrameLocals of LocalValues, self an argument: the Condition
    assert_record(FrameLocals, fl)
    assert all(type(v) is LocalValue for v in fl.locals)
    by_name = {v.name: v for v in fl.locals}
    assert {"self", "timeout", "waiter"} <= set(by_name)
    assert (by_name["self"].kind, by_name["self"].address, by_name["self"].type) == \
        ("argument", waiter["condition_id"], "Condition")
    assert by_name["waiter"].kind == "local" and fl.globals and fl.builtins
    # AND a value rendered alone is a LocalValue with no name or kind
    alone = values.render(waiter["condition_id"])
    assert_record(LocalValue, alone)
    assert (alone.name, alone.kind, alone.address, alone.type) == ("", "", waiter["condition_id"], "Condition")
    assert alone.repr.startswith("<Condition(")


def test_threading_state_is_a_record_of_thread_object_records(py_locks):
    roles, _, interp = py_locks
    # WHEN threading's state is asked
    state = native.PythonLocks(interp).threading()
    # THEN it is a ThreadingState whose threads are ThreadObjects, the Lock's waiter among them
    assert_record(ThreadingState, state)
    assert state.imported and all(type(t) is ThreadObject for t in state.threads)
    (waiter,) = [t for t in state.threads if t.native_id == roles["lock-waiter"]["tid"]]
    assert waiter.name == "Thread-2 (lock_waiter)" and waiter.started and waiter.daemon is True


def test_a_locks_address_a_reached_object_and_its_variable_cross_as_records(py_locks):
    roles, _, interp = py_locks
    locks = native.PythonLocks(interp)
    lock, condition = roles["lock-waiter"]["lock_id"], roles["cond-waiter"]["condition_id"]
    # WHEN what is at the Lock's address, which threads reach the Condition and which variable names the Lock
    # are asked
    (found,) = locks.lock_objects([lock])
    references = locks.thread_references([condition])
    names = locks.object_names([lock])
    # THEN the Lock is a LockObject, locked, referenced by its holder's and its waiter's frames (LockReferences)
    assert_record(LockObject, found)
    assert (found.object, found.type_name, found.alive, found.locked) == (lock, "_thread.lock", True, True)
    assert all(type(r) is LockReference for r in found.references)
    assert {r.tid for r in found.references} == {roles["lock-waiter"]["tid"], roles["lock-holder"]["tid"]}
    # AND the references are a ThreadReferences by address, the Condition's waiter among those reaching it
    assert_record(ThreadReferences, references)
    ((address, tids),) = references.by_object
    assert address == condition and roles["cond-waiter"]["tid"] in tids
    # AND the Lock is named by an ObjectPath: the global LOCK of __main__
    assert list(names) == [lock]
    assert_record(ObjectPath, names[lock])
    assert (names[lock].module, names[lock].variable) == ("__main__", "LOCK")

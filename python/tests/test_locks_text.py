"""How a blocked thread is described, from decoded lock data (no target needed)."""
from pyhang.analysis import locks
from pyhang.model.report import BlockedOn
from pyhang.model.references import ObjectPath
from pyhang.model.waits import ApiWait, GlibcLock, LockIdentification, PythonLockWait
from pyhang.render.locks import describe
from pyhang.render.names import ThreadNames

NAMES = ThreadNames([(1, 885), (8, 898)])


def line(b):
    return describe(locks.settle(b, set(NAMES.num)), 885, NAMES)


def test_write_held_rwlock_names_the_writer_as_a_gdb_thread():
    b = BlockedOn(kind="rwlock-write", address=0x5623984aa750, library="/usr/lib/libcuda.so.1", owners=[898],
                  owner_source="lock-word", confidence="certain")
    assert line(b) == ("Thread 1 (LWP 885) waits to write-lock rwlock 0x5623984aa750 (libcuda.so.1): "
                       "write-held by Thread 8 (LWP 898)")
    assert b.owner_alive is True


def test_read_held_rwlock_says_glibc_does_not_record_readers():
    b = BlockedOn(kind="rwlock-write", address=0x10, owners=[], glibc=GlibcLock(kind="rwlock", readers=2))
    assert line(b).endswith("read-held by 2 threads (glibc does not record which)")


def test_owner_that_is_not_a_thread_here_is_said_plainly():
    b = BlockedOn(kind="mutex", address=0x10, owners=[4242], owner_source="lock-word")
    text = line(b)
    assert "LWP 4242, which is not a thread of this process" in text and "inherited across fork" in text
    assert b.owner_alive is False


def test_gil_wait_names_the_holder_and_uncertain_identifications_are_marked():
    assert line(locks.gil_wait(898)) == "Thread 1 (LWP 885) waits for the GIL: held by Thread 8 (LWP 898)"
    b = BlockedOn(kind="semaphore", address=0x20, glibc=GlibcLock(kind="semaphore", value=0), confidence="likely")
    assert line(b) == "Thread 1 (LWP 885) waits on semaphore 0x20: value 0: a semaphore has no owner [likely]"


def test_join_names_the_thread_joined():
    assert line(locks.thread_join(0x7f00, 898)) == "Thread 1 (LWP 885) waits in pthread_join for Thread 8 (LWP 898) to exit"


def test_an_object_is_named_by_the_global_or_the_instance_attribute_that_reaches_it():
    from pyhang.render.names import object_name
    assert object_name(ObjectPath(module="__main__", variable="config_lock")) == "__main__.config_lock"
    assert object_name(ObjectPath(module="mymod", variable="pool", attribute="_lock", owner_type="Pool",
                                  owner=0x10)) == "mymod.pool._lock"
    assert object_name(ObjectPath(module=None, variable="self", attribute="_lock", owner_type="Cache",
                                  owner=0x7f00aa, tid=5, function="Cache.get")) == "self._lock of Cache at 0x7f00aa"


def test_names_are_asked_only_for_what_a_wait_can_carry():
    from pyhang.analysis.locks import named_objects
    from pyhang.model.kinds import WaitKind
    native_lock = LockIdentification(kind="semaphore", address=0x1000)
    # A Condition.wait: the Condition, never the waiter lock (a local no variable of the program holds)
    # nor the futex word inside it (no Python object starts there).
    condition = PythonLockWait(kind=WaitKind.PY_CONDITION, object=0x2000, condition=0x3000)
    assert named_objects(native_lock, condition, None) == [0x3000]
    lock = PythonLockWait(kind=WaitKind.PY_LOCK, object=0x2000, join_self=0x4000)
    assert named_objects(native_lock, lock, ApiWait(kind=WaitKind.PY_QUEUE_GET, object=0x5000)) == [0x2000, 0x4000, 0x5000]
    # A native lock with no Python lock over it keeps its own address.
    assert named_objects(native_lock, None, None) == [0x1000]
    assert named_objects(None, None, None) == []


def test_how_the_python_lock_search_found_a_lock_is_worded_from_its_facts():
    from pyhang.model.kinds import PyLockFound
    from pyhang.model.waits import CodeLine, PythonLockEvidence
    from pyhang.render.locks import evidence_words
    frame = CodeLine(function="take", file="/srv/app/lock_abba.py", line=24)
    in_sem = PythonLockEvidence(found=PyLockFound.IN_SEMAPHORE, futex=0x3676a780, word=0x3676a780,
                                type="_thread.RLock", object=0x7f59dcadd280, slot=1, frame=frame)
    assert evidence_words(in_sem) == ("futex 0x3676a780 is in the sem_t 0x3676a780 of _thread.RLock 0x7f59dcadd280; "
                                      "slot 1 of take (lock_abba.py:24)")
    bare = PythonLockEvidence(found=PyLockFound.NO_FUTEX, type="_thread.lock", object=0x10, slot=0, via_method=True,
                              frame=frame, condition=0x20)
    assert evidence_words(bare) == ("no futex address: innermost _thread.lock 0x10 on the stack, a bound method of it "
                                    "in slot 0 of take (lock_abba.py:24); Condition.wait: waiting to be notified "
                                    "(self 0x20)")

"""What the native module finds crosses into Python as the records of
pyhang.model, made in C++ from one table per result struct
(python/records.hpp): every table names only fields its record has, and a
decoded lock, its problems, an identification, the files a process maps and
the warnings arrive as those records, equal to what their own JSON gives
back."""
import os
import struct

import pytest

import _pyhang_native as native

from pyhang.model import kinds, record as records
from pyhang.model.target_facts import MappedObject
from pyhang.model.unread import ReadProblem, ReadStep
from pyhang.model.warning_facts import StateIssue, TargetIssue, warnings_of
from pyhang.model.waits import GlibcLock, GlibcRelease, LockIdentification, LockIssue


def memory(base, data):
    """A callback target of `data` at `base` (nothing else readable)."""
    def read(address, size):
        if base <= address < base + len(data):
            return data[address - base:address - base + size]
        return None
    return native.Target.from_callback(read, [(base, base + len(data), 0, "[synthetic]")], "synthetic")


def test_every_table_fills_only_fields_its_record_has():
    # GIVEN every record table the module holds
    tables = native.record_tables()
    # THEN each names a record class of pyhang.model and fields it has (check_records imports and checks them all)
    native.check_records()
    assert len(tables) >= 10
    for module, name, fields in tables:
        cls = getattr(__import__(module, fromlist=[name]), name)
        assert fields and set(fields) <= set(cls.__record_fields__), (module, name, fields)


def test_a_locked_mutex_crosses_as_its_glibc_lock_record():
    # GIVEN a glibc 2.36 mutex locked once by TID 4321 (__lock 1, __count 0, __owner 4321, __nusers 1, __kind 0)
    base = 0x10000
    target = memory(base, struct.pack("<iIiIiihhQQ", 1, 0, 4321, 1, 0, 0, 0, 0, 0, 0))
    reader = native.LockReader(target, "2.36")
    # WHEN it is decoded
    lock = reader.decode("mutex", base)
    # THEN the answer is the model's record, with the owner the lock word records
    assert type(lock) is GlibcLock
    assert (lock.kind, lock.address, lock.locked, lock.owners, lock.owner_source) == \
        ("mutex-normal", base, True, [4321], "__owner")
    assert lock.fields["__owner"] == 4321
    # AND its JSON gives the same record back
    assert records.from_data(GlibcLock, records.to_data(lock)) == lock
    # AND the release given crosses as its record
    assert reader.glibc == GlibcRelease(version="2.36", source="given", exact=True, layouts=reader.glibc.layouts)
    assert reader.problem is None
    # AND a kind of lock the reader does not decode is refused, not guessed
    with pytest.raises(ValueError):
        reader.decode("spinlock", base)


def test_garbage_bytes_cross_as_records_of_what_is_odd_about_them():
    # GIVEN bytes that are no mutex (every bit set)
    base = 0x20000
    target = memory(base, b"\xff" * 64)
    # WHEN they are decoded as one
    lock = native.LockReader(target, "2.36").decode("mutex", base)
    # THEN the lock is not plausible and each problem is a LockIssue record
    assert type(lock) is GlibcLock and lock.plausible is False
    assert lock.problem and all(type(p) is LockIssue for p in lock.problem)
    assert records.from_data(GlibcLock, records.to_data(lock)) == lock


def test_an_unreadable_lock_and_a_thread_with_no_registers_are_records_too():
    # GIVEN a target with nothing readable
    target = memory(0x30000, b"")
    reader = native.LockReader(target, "2.36")
    # THEN a lock there is a record that says it could not be read
    lock = reader.decode("mutex", 0x30000)
    assert type(lock) is GlibcLock and lock.readable is False
    # AND a thread whose registers are not known is identified as waiting on nothing, as a record
    found = reader.identify(1, None, [])
    assert type(found) is LockIdentification and found.kind is None
    assert records.from_data(LockIdentification, records.to_data(found)) == found


def test_a_version_that_is_none_crosses_as_the_record_of_the_problem():
    # GIVEN a glibc version that is no version
    reader = native.LockReader(memory(0x40000, b""), "two")
    # THEN the layouts' problem is a LayoutsIssue record naming the text given, and no release was found
    assert reader.glibc is None
    assert (type(reader.problem).__name__, reader.problem.kind, reader.problem.version) == \
        ("LayoutsIssue", "not-a-version", "two")
    # AND no lock is decoded with layouts it does not have
    assert reader.decode("mutex", 0x40000) is None


def test_the_files_a_process_maps_cross_as_mapped_object_records():
    # GIVEN this process, read as a live target
    target = native.Target.live(os.getpid())
    # WHEN its mapped files are listed
    objects = target.objects()
    # THEN each is a MappedObject, this interpreter's libc among them with its symbols read
    assert objects and all(type(o) is MappedObject for o in objects)
    libc = [o for o in objects if os.path.basename(o.path).startswith("libc.so")]
    assert libc and libc[0].start < libc[0].end and libc[0].symbols > 0 and libc[0].problem is None
    assert all(type(w) is TargetIssue for w in target.warnings)


def test_a_warnings_data_leaves_out_what_it_does_not_fill_and_gives_the_same_record_back():
    # GIVEN a target warning that fills two fields, and an interpreter warning with a note
    lost = TargetIssue(kinds.TargetWarning.FILES_MISSING, number=3, other=8)
    note = ReadProblem(path=[ReadStep(kinds.ReadPart.FUNCTION, address=0x10, name="PyEval_InitThreads")],
                       why=kinds.ReadWhy.UNDECODABLE)
    gil = StateIssue(kinds.StateWarning.GIL_STATICS_UNDECODED, text="/lib/libpython3.6m.so", notes=[note])
    # WHEN they are kept as data (a snapshot)
    data = [records.to_data(lost), records.to_data(gil)]
    # THEN the target warning's data holds only what it fills, the interpreter's its numbers and note
    assert data[0] == {"kind": "files-missing", "number": 3, "other": 8}
    assert "changes" not in data[1] and data[1]["notes"][0]["why"] == kinds.ReadWhy.UNDECODABLE
    # AND the data gives each its own record back, by its kind
    assert warnings_of(data) == [lost, gil]

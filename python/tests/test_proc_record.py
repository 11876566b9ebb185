"""A core's record of /proc (pyhang.proc_record) is one ELF note the core's
readers skip, tied to the one core it was written into: read back whole
from that core; from a core whose notes or size differ, of another process,
damaged or of another schema it is a TargetWarning's data, never raised.
On a core file made here (the ELF layout gdb's gcore writes: memory first,
then the notes) and on the record of this very process."""
import json
import os
import struct
import subprocess
import time

from pyhang import core_notes, proc_record, procfs
from pyhang.model.kinds import TargetWarning


def make_core(path, notes=b"CORE notes: registers of every thread"):
    """A 64-bit core file: its header, two program headers (PT_LOAD, PT_NOTE), a page of memory, the notes."""
    note = core_notes.note_bytes("CORE", 1, notes)
    phoff, memory = 64, b"\x11" * 4096
    load_at = phoff + 2 * 56
    note_at = load_at + len(memory)
    head = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, phoff, 0, 0, 64, 56,
                                                                   2, 64, 0, 0)
    phdrs = struct.pack("<IIQQQQQQ", core_notes.PT_LOAD, 4, load_at, 0x400000, 0, len(memory), len(memory), 1) + \
        struct.pack("<IIQQQQQQ", core_notes.PT_NOTE, 4, note_at, 0, 0, len(note), 0, 1)
    with open(path, "wb") as f:
        f.write(head + phdrs + memory + note + b"\0\0\0")   # an unaligned end, as gcore's section headers leave it
    return path


def recorded(tmp_path, name="core", notes=b"CORE notes: registers of every thread"):
    path = make_core(str(tmp_path / name), notes)
    proc_record.write(path, proc_record.collect(os.getpid()))
    return path


def test_the_record_of_this_process_reads_back_from_its_core_and_the_cores_own_notes_stay(tmp_path):
    path = recorded(tmp_path)
    record, problem = proc_record.read(path, os.getpid())
    assert problem is None and record.pid == os.getpid() and record.schema == proc_record.SCHEMA
    # the fd table is this process's, each fd with what it is; every thread with its system-call line
    assert {e.fd for e in record.files} >= {0, 1, 2} and record.files_complete
    assert {t.tid for t in record.threads} == {int(t) for t in os.listdir("/proc/self/task")}
    assert all(t.syscall for t in record.threads) and set(record.clocks) == {"0", "1", "7", "11"}
    # the core's own notes are still read first, then the record; its memory is where it was
    with open(path, "rb") as f:
        (segment, data), = core_notes.note_segments(f)
        load = core_notes.segments(f)[0]
        f.seek(load.offset)
        assert f.read(4096) == b"\x11" * 4096
    found = core_notes.notes(data)
    assert [(n, k) for n, k, *_ in found] == [("CORE", 1), (proc_record.NOTE_NAME, proc_record.NT_PYHANG_PROC)]
    assert found[0][2] == b"CORE notes: registers of every thread" and segment.offset % 8 == 0


def test_only_the_variables_that_name_a_rank_or_job_are_recorded():
    # GIVEN a process started with rank and job variables and others
    child = subprocess.Popen(["/bin/sleep", "60"], env={"RANK": "3", "WORLD_SIZE": "8", "SLURM_JOB_ID": "4242",
                                                        "SECRET_TOKEN": "x"})
    try:
        data = proc_record.collect(child.pid)
    finally:
        child.kill()
        child.wait()
    assert data["environment"] == {"RANK": "3", "WORLD_SIZE": "8", "SLURM_JOB_ID": "4242"}


def test_a_record_tied_to_another_core_is_not_used(tmp_path):
    # GIVEN the record of one core added to a core of the same process whose notes differ
    first = recorded(tmp_path, "first")
    other = make_core(str(tmp_path / "other"), notes=b"CORE notes: registers at another moment")
    core_notes.add_note(other, proc_record.NOTE_NAME, proc_record.NT_PYHANG_PROC, proc_record.raw(first)[0])
    record, problem = proc_record.read(other, os.getpid())
    # THEN it is not used, and the warning says which core it names and which this is
    assert record is None and problem.kind == TargetWarning.PROC_RECORD_OTHER_CORE
    assert problem.number == problem.other == os.getpid() and problem.text != problem.other_text
    # AND a core of another process
    record, problem = proc_record.read(first, os.getpid() + 1)
    assert record is None and (problem.number, problem.other) == (os.getpid(), os.getpid() + 1)


def test_a_damaged_record_or_one_of_another_schema_is_a_warning_never_an_exception(tmp_path):
    cases = [(b"\xff{not json", TargetWarning.PROC_RECORD_DAMAGED),
             (b"[1, 2]", TargetWarning.PROC_RECORD_DAMAGED),
             (json.dumps({"schema": proc_record.SCHEMA, "pid": "x", "core": {"size": 1}}).encode(),
              TargetWarning.PROC_RECORD_DAMAGED),
             (json.dumps({"schema": proc_record.SCHEMA, "pid": 5, "files": "oops"}).encode(),
              TargetWarning.PROC_RECORD_DAMAGED),
             (json.dumps({"schema": "pyhang-proc/2", "pyhang_version": "9"}).encode(),
              TargetWarning.PROC_RECORD_OTHER_VERSION)]
    for i, (desc, kind) in enumerate(cases):
        path = make_core(str(tmp_path / ("core%d" % i)))
        core_notes.add_note(path, proc_record.NOTE_NAME, proc_record.NT_PYHANG_PROC, desc)
        record, problem = proc_record.read(path, 5)
        assert record is None and problem.kind == kind and problem.path == path, (desc, problem)
    assert proc_record.read(make_core(str(tmp_path / "plain")), 5) == (None, None)
    assert proc_record.read(str(tmp_path / "missing"), 5) == (None, None)


def test_a_zombie_child_is_recorded_with_its_exit_status():
    # GIVEN a child that exited with status 3 and is not reaped yet
    child = subprocess.Popen(["/bin/sh", "-c", "exit 3"])
    try:
        while (procfs.stat(child.pid) or {}).get("state") != "Z":
            time.sleep(0.01)
        children = {c["pid"]: c for c in proc_record.collect(os.getpid())["children"]}
    finally:
        child.wait()
    # THEN the record has it as a zombie with the status waitpid() gives
    assert children[child.pid]["state"] == "Z" and children[child.pid]["exit_status"] == 3 << 8


def test_notes_moved_before_the_memory_keep_the_record_tied_and_survive_a_cut(tmp_path):
    # GIVEN a recorded core in gdb's layout (memory, then notes), its notes moved first as pyhang gcore does
    path = recorded(tmp_path)
    core_notes.notes_first(path)
    # THEN the notes come before the memory, the memory's bytes keep their place within a page, and the record
    # is still this core's
    with open(path, "rb") as f:
        (notes, data), = core_notes.note_segments(f)
        load = next(s for s in core_notes.segments(f) if s.type == core_notes.PT_LOAD)
        f.seek(load.offset)
        assert f.read(4096) == b"\x11" * 4096
    assert notes.offset < load.offset and load.offset % 4096 == (64 + 2 * 56) % 4096
    record, problem = proc_record.read(path, os.getpid())
    assert problem is None and record.pid == os.getpid()
    # AND cut inside its memory, the core still holds every note and the record
    with open(path, "r+b") as f:
        f.truncate(load.offset + 100)
    with open(path, "rb") as f:
        (_, kept), = core_notes.note_segments(f)
    assert kept == data and proc_record.read(path, os.getpid())[1] is None


def test_what_a_record_holds_is_said_in_words_of_its_counts():
    from pyhang.model.proc_record import ChildProcess, ProcSummary
    from pyhang.render.gcore import recorded_text
    two = ProcSummary(fds=17, threads=4, children=[ChildProcess(pid=7, state="S"), ChildProcess(pid=8, state="Z")])
    assert recorded_text(two) == "17 fds, the system calls of 4 threads, 2 child processes"
    assert recorded_text(ProcSummary(fds=1, threads=1, children=[ChildProcess(pid=7)])) == \
        "1 fd, the system calls of 1 thread, 1 child process"
    assert recorded_text(ProcSummary(fds=3, threads=1)) == "3 fds, the system calls of 1 thread, no child process"

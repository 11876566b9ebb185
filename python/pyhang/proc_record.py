"""What /proc knows of a process that a core of it cannot hold, recorded
by `pyhang gcore` while the process is stopped for its core, and kept in
that core as one ELF note (pyhang.core_notes): the fd table with what each
fd is (a pipe's or socket's other end and the processes holding it, a
file's locks from /proc/locks: pyhang.fd_holders.files), each thread's
/proc/PID/task/TID/syscall line, the children (a zombie's exit status),
the environment variables that name a rank or a job, and the clocks.

The note is named "PYHANG", of type NT_PYHANG_PROC, and holds the record as
JSON (model.proc_record.ProcRecord) with its schema string.  A record says
which core it belongs to (CoreTie): the core's size before the note was
added, and a hash of the notes the core held then (every thread's
registers, the process's psinfo, auxv and mapped files).  `read` gives the
record of a core, or why the one it holds cannot be used (a TargetWarning:
damaged, of another schema, of another process or core); never raises.
Plain Python: gdb's collector and the command line both read it.
"""
import json
import os
import time

from pyhang import VERSION, core_notes, fd_holders, procfs
from pyhang.model.kinds import TargetWarning
from pyhang.model.files import FdObject
from pyhang.model.proc_record import CoreTie, ProcRecord
from pyhang.model.record import from_data
from pyhang.model.warning_facts import TargetIssue

SCHEMA = "pyhang-proc/1"
NOTE_NAME = "PYHANG"
NT_PYHANG_PROC = 0x50594841          # no reader of cores knows this type: gdb and readelf skip it
MAX_RECORD = 16 << 20                # bytes of JSON read at most

# The environment variables that name a rank or a job: torch.distributed's launchers (torchrun, elastic),
# Slurm, Open MPI, MPICH/PMI, PMIx, MVAPICH, PBS, LSF and Grid Engine.
JOB_VARIABLES = frozenset((
    "RANK", "LOCAL_RANK", "GROUP_RANK", "ROLE_RANK", "NODE_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
    "GROUP_WORLD_SIZE", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID",
    "TORCHELASTIC_RESTART_COUNT", "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NAME", "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_ID", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS",
    "SLURMD_NODENAME", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
    "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "PBS_JOBID", "PBS_ARRAY_INDEX",
    "LSB_JOBID", "LSB_JOBINDEX", "JOB_ID", "SGE_TASK_ID"))

# The clocks a sleep's deadline may be on (pyhang.analysis.syscalls.CLOCKS): REALTIME, MONOTONIC, BOOTTIME, TAI.
CLOCKS = (0, 1, 7, 11)


def collect(pid):
    """The record of live process `pid` as data (a ProcRecord's, without its CoreTie): read while
    the process is stopped, so that it describes the moment its core is made."""
    found = procfs.open_fds(pid)
    fds, complete = found if found is not None else ([], False)
    try:
        tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid) if t.isdigit())
    except OSError:
        tids = []
    clocks = {}
    for clock in CLOCKS:
        try:
            clocks[str(clock)] = time.clock_gettime_ns(clock)
        except (OSError, ValueError, OverflowError):
            pass
    return {
        "schema": SCHEMA, "pid": pid, "pyhang_version": VERSION,
        "files": [{"fd": fd, "object": obj} for fd, obj in sorted(fd_holders.files(pid, fds).items())],
        "files_complete": complete,
        "threads": [{"tid": tid, "syscall": procfs.syscall_line(pid, tid), "comm": procfs.thread_name(pid, tid)}
                    for tid in tids],
        "children": [{"pid": child, "state": s["state"], "comm": s["comm"],
                      "exit_status": procfs.zombie_status(child, s) if s["state"] == "Z" else None}
                     for child, s in procfs.children(pid)],
        "environment": procfs.environment(pid, JOB_VARIABLES) or {},
        "clocks": clocks,
    }


def write(path, data):
    """Adds record `data` (collect()'s) to core `path` as its note, tied to the core as it is now.
    Raises core_notes.NotACore when `path` is no core a note can be added to."""
    size, notes = core_notes.last_notes(path)
    data = dict(data, core={"size": size, "notes_sha256": core_notes.digest(notes)})
    core_notes.add_note(path, NOTE_NAME, NT_PYHANG_PROC, json.dumps(data, separators=(",", ":")).encode())


def _before_memory(path, offset):
    """Whether the note segment at `offset` of core `path` comes before every segment of memory."""
    try:
        with open(path, "rb") as f:
            return all(offset < seg.offset for seg in core_notes.segments(f)
                       if seg.type == core_notes.PT_LOAD and seg.filesz)
    except (OSError, core_notes.NotACore):
        return False


def raw(path):
    """(the bytes of core `path`'s record note, the bytes of the notes before it in its segment, the
    segment's offset); None when it holds no record (or is no core: gdb says why)."""
    try:
        with open(path, "rb") as f:
            segments = core_notes.note_segments(f)
    except (OSError, core_notes.NotACore):
        return None
    for segment, data in segments:
        for name, kind, desc, start, _ in core_notes.notes(data):
            if name == NOTE_NAME and kind == NT_PYHANG_PROC:
                return desc, data[:start], segment.offset
    return None


def _types(value, kinds, what):
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
        raise ValueError("%s is %r" % (what, value))


def _check(r):
    """ValueError (or TypeError, AttributeError) when ProcRecord `r` holds what no collect() writes:
    every field the collectors read is of its type."""
    _types(r.pid, int, "pid")
    _types(r.core, CoreTie, "core")
    _types(r.core.size, int, "core.size")
    _types(r.core.notes_sha256, str, "core.notes_sha256")
    for e in r.files:
        _types(e.fd, int, "an fd")
        _types(e.object, FdObject, "fd %d's object" % e.fd)
        _types(e.object.kind, str, "fd %d's kind" % e.fd)
    for t in r.threads:
        _types(t.tid, int, "a thread's TID")
        _types(t.syscall, (str, type(None)), "thread %d's system call" % t.tid)
        _types(t.comm, (str, type(None)), "thread %d's name" % t.tid)
    for c in r.children:
        _types(c.pid, int, "a child's pid")
        _types(c.state, str, "child %d's state" % c.pid)
        _types(c.exit_status, (int, type(None)), "child %d's exit status" % c.pid)
    for name, value in r.environment.items():
        _types(value, str, "variable %s" % name)
    for clock, value in r.clocks.items():
        _types(value, int, "clock %s" % clock)


def _problem(kind, path, **said):
    return TargetIssue(kind, path=path, **said)


def read(path, core_pid):
    """(ProcRecord, None) of core `path` of process `core_pid`; (None, a TargetWarning's data) when
    its record cannot be used (damaged, of another schema, of another process or core); (None, None)
    when it holds none."""
    found = raw(path)
    if found is None:
        return None, None
    desc, before, offset = found
    try:
        data = json.loads(desc[:MAX_RECORD].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, _problem(TargetWarning.PROC_RECORD_DAMAGED, path, text="not JSON (%s)" % exc)
    if not isinstance(data, dict):
        return None, _problem(TargetWarning.PROC_RECORD_DAMAGED, path, text="not a JSON object")
    schema = data.get("schema")
    if schema != SCHEMA:
        return None, _problem(TargetWarning.PROC_RECORD_OTHER_VERSION, path, text=str(schema)[:80],
                              other_text=SCHEMA, given=str(data.get("pyhang_version"))[:40])
    try:
        record = from_data(ProcRecord, data)
        _check(record)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        return None, _problem(TargetWarning.PROC_RECORD_DAMAGED, path, text="%s: %s" % (type(exc).__name__, exc))
    pid, tied = record.pid, (record.core.size, record.core.notes_sha256)
    if core_pid is not None and pid != core_pid:
        return None, _problem(TargetWarning.PROC_RECORD_OTHER_CORE, path, number=pid, other=core_pid)
    # add_note copied the notes to the end of the core as it was, 8-byte aligned; pyhang gcore then put them
    # before the memory (core_notes.notes_first), where the size the core had is no longer their offset
    here = core_notes.digest(before)
    if ((tied[0] + 7) & ~7 != offset and not _before_memory(path, offset)) or tied[1] != here:
        return None, _problem(TargetWarning.PROC_RECORD_OTHER_CORE, path, number=pid, other=core_pid,
                              text="%d bytes, notes %s" % (tied[0], tied[1][:16]),
                              other_text="%d bytes, notes %s" % (offset, here[:16]))
    return record, None

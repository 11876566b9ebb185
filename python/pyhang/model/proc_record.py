"""What /proc knew of a process that its core cannot hold, as records: the
record `pyhang gcore` keeps in the core it makes (pyhang.proc_record reads
and writes it), and the summary of it a report's target carries.

The collectors answer the `files`, `proc_syscalls` and `clock_now`
questions of a core from it as they answer them of a live process from
/proc (pyhang.native_facts), so the analysis reads a core with a record as
it reads the live process."""
from __future__ import annotations

from pyhang.model.files import FdObject
from pyhang.model.record import field, record

__all__ = ["ChildProcess", "CoreTie", "FdEntry", "ProcRecord", "ProcSummary", "ProcThread"]


@record
class FdEntry:
    """One fd of the table and what it is (pyhang.fd_holders.files: peers and holders included)."""
    fd: int = 0
    object: FdObject | None = None

    __nested__ = {"object": FdObject}


@record
class ProcThread:
    """A thread, its name and its /proc/PID/task/TID/syscall line, as the kernel wrote it."""
    tid: int = 0                      # the host's TID (/proc's)
    syscall: str | None = None        # None: it could not be read
    comm: str | None = None           # its name (/proc/PID/task/TID/comm), which a core does not keep


@record
class ChildProcess:
    """A child of the process, from its /proc/PID/stat."""
    pid: int = 0
    state: str = ""                   # the stat file's state letter: "S", "R", "D", "T", "Z", ...
    comm: str | None = None
    exit_status: int | None = None    # a zombie's: the status waitpid() will give (its stat's exit_code)


@record
class CoreTie:
    """What ties a record to the one core it was written into: the core's size and a hash of the notes
    it held (every thread's registers, the process's psinfo, auxv and mapped files) before the record was
    added."""
    size: int = 0
    notes_sha256: str = ""


@record
class ProcRecord:
    """What /proc said of a process while it was stopped for its core."""
    schema: str = ""                  # pyhang.proc_record.SCHEMA
    pid: int = 0                      # the host's
    pyhang_version: str | None = None
    files: list[FdEntry] = field(default_factory=list)
    files_complete: bool = True       # False: it had more fds than were recorded
    threads: list[ProcThread] = field(default_factory=list)
    children: list[ChildProcess] = field(default_factory=list)
    environment: dict = field(default_factory=dict)   # the variables that name a rank or a job, as set at exec
    clocks: dict = field(default_factory=dict)        # clock id (a string) → its time (ns) when recorded
    core: CoreTie | None = None

    __nested__ = {"files": FdEntry, "threads": ProcThread, "children": ChildProcess, "core": CoreTie}


@record
class ProcSummary:
    """What a report says of the record its core held: the schema, how much was recorded, the children
    and the rank or job variables."""
    schema: str = ""
    fds: int = 0
    threads: int = 0
    children: list[ChildProcess] = field(default_factory=list)
    environment: dict = field(default_factory=dict)

    __nested__ = {"children": ChildProcess}


def summary(r):
    """The ProcSummary of ProcRecord `r`."""
    return ProcSummary(schema=r.schema, fds=len(r.files), threads=len(r.threads), children=list(r.children),
                       environment=dict(r.environment))

"""What a process inherited at fork, as records: the answers to the
`fork_facts` and `fork_containers` questions (pyhang.model.facts), made once
at the collector from native fork_facts(), process_facts() and
fork_containers() (`from_data`); a snapshot keeps them as data (`to_data`).
The fork-hazard rules (pyhang.analysis.forks) read their fields."""
from __future__ import annotations

from pyhang.model.record import field, record
from pyhang.model.unread import ReadProblem
from pyhang.model.waits import DescriptorsIssue

__all__ = ["ForkIssue", "Landmarks", "CodeAddress", "ThreadDescriptor", "InternalLock", "BigContainer", "PythonForkFacts", "ProcessFacts",
           "ForkFacts", "ForkContainers"]


@record
class CodeAddress:
    """A code address, symbolized."""
    address: int = 0
    function: str | None = None
    library: str | None = None


@record
class ThreadDescriptor:
    """A struct pthread found at the top of an anonymous mapping that is no
    thread of this process (native fork::ThreadDescriptor)."""
    address: int = 0                  # the struct pthread (its pthread_t)
    stack: list[int] = field(default_factory=list)   # [start, end] of the mapping holding it
    tid: int = 0                      # its tid field: 0 after fork (or after the thread ended)
    cancelhandling: int | None = None
    exited: bool = False              # the thread ended by itself
    start_routine: CodeAddress | None = None

    __nested__ = {"start_routine": CodeAddress}


@record
class InternalLock:
    """A lock glibc keeps for itself (native fork::NamedLock)."""
    name: str = ""                    # "__exit_funcs_lock"
    address: int = 0
    found: str = ""                   # how the address was found: model.kinds.LockFound
    library: str = ""                 # the libc it is in


@record
class BigContainer:
    """A large builtin container among module globals (native fork::BigContainer)."""
    where: str = ""                   # "module.name"
    type: str = ""
    length: int = 0
    address: int = 0
    estimated_bytes: int = 0          # the container and its first-level items (sampled)


@record
class PythonForkFacts:
    """What the interpreter says of multiprocessing and torch (native fork::PythonForkFacts)."""
    multiprocessing: bool = False     # multiprocessing.context imported
    default_context: str | None = None   # the type of its default context ("ForkContext")
    actual_context: str | None = None    # ... of the one fixed, None when not fixed yet
    current_process_type: str | None = None   # multiprocessing.process._current_process
    current_process_name: str | None = None
    parent_pid: int | None = None
    torch: bool = False               # torch.cuda imported
    cuda_initialized: bool | None = None
    cuda_in_bad_fork: bool | None = None
    threading_active: int | None = None   # len(threading._active)
    containers: list[BigContainer] = field(default_factory=list)
    problems: list[ReadProblem] = field(default_factory=list)   # what could not be read

    __nested__ = {"containers": BigContainer, "problems": ReadProblem}


@record
class ForkIssue:
    """What a fork fact could not be read for (native fork::ForkIssue): a
    kind, and the numbers and text (a path, another decoder's words) it names."""
    kind: str = ""                    # model.kinds.ForkProblem
    number: int = 0
    other: int = 0
    text: str = ""
    reason: str = ""                  # READER_ERROR: model.kinds.ReaderFailure (text: the path)


@record
class Landmarks:
    """Where a process's executable, libc and heap start (0: not mapped)."""
    exe: int = 0
    libc: int = 0
    heap: int = 0


@record
class ProcessFacts:
    """/proc of a live process and of its parent (native process_facts(),
    the start times from pyhang.procfs)."""
    pid: int = 0
    ppid: int = 0
    exe: str = ""
    parent_exe: str = ""
    cmdline: str = ""                 # NULs as spaces
    parent_cmdline: str = ""
    same_address_space: bool = False  # the address space is the parent's copy ...
    mapped: Landmarks | None = None   # ... decided from these starts in the process
    parent_mapped: Landmarks | None = None   # ... and in its parent
    parent_threads: list[int] = field(default_factory=list)
    parent_thread_names: list[str] = field(default_factory=list)
    smaps_rollup: dict[str, int] = field(default_factory=dict)   # kB, of the process
    parent_smaps_rollup: dict[str, int] = field(default_factory=dict)
    issue: ForkIssue | None = None    # what could not be read
    start_ticks: int | None = None
    parent_start_ticks: int | None = None

    __nested__ = {"mapped": Landmarks, "parent_mapped": Landmarks, "issue": ForkIssue}


@record
class ForkFacts:
    """What a fork child inherited (native fork_facts()); only
    `descriptor_issue` when the target could not be read."""
    descriptors: list[ThreadDescriptor] = field(default_factory=list)
    descriptor_issue: ForkIssue | None = None
    mappings_scanned: int = 0
    internal_locks: list[InternalLock] = field(default_factory=list)
    internal_locks_issue: ForkIssue | None = None
    descriptors_issue: DescriptorsIssue | None = None   # why struct pthread's fields are not known (nptl)
    libraries: list[str] = field(default_factory=list)
    python: PythonForkFacts | None = None
    process: ProcessFacts | None = None   # a live process's /proc

    __nested__ = {"descriptors": ThreadDescriptor, "internal_locks": InternalLock, "python": PythonForkFacts,
                  "process": ProcessFacts, "descriptor_issue": ForkIssue, "internal_locks_issue": ForkIssue,
                  "descriptors_issue": DescriptorsIssue}


@record
class ForkContainers:
    """The large builtin containers among module globals (native fork_containers())."""
    containers: list[BigContainer] = field(default_factory=list)
    problems: list[ReadProblem] = field(default_factory=list)   # what could not be read

    __nested__ = {"containers": BigContainer, "problems": ReadProblem}

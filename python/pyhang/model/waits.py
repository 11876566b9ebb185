"""What the native decoders say a sleeping thread waits on, as records.

A collector answers the `locks`, `python_locks` and `frame_selves`
questions (pyhang.model.facts) with these, made by the native module itself
(python/records.hpp); a snapshot keeps them as data (`to_data`, back with
`from_data`).  The analysis reads their fields.

The string fields hold the values of the vocabularies in
pyhang.model.kinds (WaitKind, OwnerSource, Confidence, GlibcLockKind,
LockFlag, LockProblem, ScoreReason, LockEvidence, IdentifyProblem,
LayoutsProblem, DescriptorCheck, ThreadListProblem, DescriptorsProblem), which
are the native name tables' names; what the decoders found odd or how they
decided are kinds and numbers too, worded by pyhang.render.glibc.
"""
from __future__ import annotations

from pyhang.model.kinds import WaitKind
from pyhang.model.files import FdObject, FileLock
from pyhang.model.python_values import ObjectValue
from pyhang.model.record import field, from_data, record, to_data
from pyhang.model.unread import ReadProblem

__all__ = ["PythonLockEvidence", "DescriptorIssue", "DescriptorsIssue", "LayoutsIssue", "ThreadListIssue", "ThreadDescriptors", "ParkedRegisters", "LockIssue", "GlibcLock", "Reason", "Candidate", "HowIdentified", "IdentifyFailure", "LockIdentification", "GlibcRelease", "CodeLine", "PythonLockWait", "ApiWait", "PoolWorker", "SyscallFacts", "PythonLockDetail", "ApiDetail", "JoinDetail", "CollectiveDetail", "FrameSelf", "SyscallWait", "syscall_of", "from_data", "to_data"]


@record
class DescriptorIssue:
    """A libthread_db descriptor of libc that contradicts what the decoders assume (native DescriptorIssue)."""
    kind: str                         # model.glibc_kinds.DescriptorCheck
    desc: list[int] = field(default_factory=list)   # the descriptor's words [size in bits, count, offset]
    value: int = 0                    # a word descriptor's value (a size, a register number)
    least: int = 0                    # the range the decoders assume (or the one value, `most`)
    most: int = 0


@record
class DescriptorsIssue:
    """Why pthread_t cannot be mapped to TIDs (native DescriptorsIssue:
    LockReader.pthread_problem, fork_facts()' descriptors_issue)."""
    kind: str                         # model.glibc_kinds.DescriptorsProblem
    library: str = ""                 # tid-not-one-word: the library's file name
    tried: list[str] = field(default_factory=list)      # no-tid-descriptor: the libraries tried, in order
    unopened: list[str] = field(default_factory=list)   # ... those whose file could not be opened
    tid: DescriptorIssue | None = None   # tid-not-one-word: what the tid descriptor describes

    __nested__ = {"tid": DescriptorIssue}


@record
class LayoutsIssue:
    """Why glibc's lock layouts cannot be used for a target, or the caveat of
    using them (native LayoutsIssue: LockReader.problem, .caveat)."""
    kind: str                         # model.glibc_kinds.LayoutsProblem
    version: str = ""                 # the version ("2.45"), or the text given that is none
    exact: bool = True                # False: only a lower bound of the release (read from `source`)
    source: str = ""                  # where the version was read ("__nptl_version", "version-definitions", "given")
    library: str = ""                 # the file it is about: libc's path, or the descriptors' library
    detail: str = ""                  # libc-unreadable: why, as the target read it (a ReaderFailure)
    error_number: int = 0             # libc-unreadable: the errno that came with it
    build_id: str = ""                # libc-unreadable after a build-id mismatch (detail): the file's build-id
    core_build_id: str = ""           # ... and the core's
    oldest: str = ""                  # outside: the oldest release of the rows
    newest: str = ""                  # the newest release the layouts were checked against
    open_ended: bool = False          # outside: the newest row also takes later releases
    layouts: str = ""                 # the newest row's name ("glibc 2.41+")
    differs: list[DescriptorIssue] = field(default_factory=list)   # contradicted: each descriptor
    missing: list[str] = field(default_factory=list)   # unvouched: the descriptors libc does not export

    __nested__ = {"differs": DescriptorIssue}


@record
class ThreadListIssue:
    """Why glibc's lists of threads were not found, or why a walk of them
    stopped early (native thread_descriptors()' problem)."""
    kind: str                         # model.glibc_kinds.ThreadListProblem
    library: str = ""                 # the library (or those tried) the descriptors are missing from
    head: str = ""                    # the list ("_dl_stack_used") ...
    head_address: int = 0             # ... and its head
    step: int = 0                     # the entry's index on that list
    entry: int = 0                    # the entry (the list_t in a struct pthread)
    pthread: int = 0                  # the struct pthread
    value: int = 0                    # prev-mismatch: the prev read; tid-twice: the other struct pthread
    expected: int = 0                 # prev-mismatch: the prev expected
    number: int = 0                   # too-many-entries: the bound; tid-twice: the TID


@record
class ThreadDescriptors:
    """Each thread's struct pthread from glibc's lists of threads (native thread_descriptors())."""
    threads: dict[int, int] = field(default_factory=dict)   # TID → its struct pthread (the thread's fs_base)
    without_tid: int = 0              # entries whose tid is 0 (exited and not joined, or not started)
    problem: ThreadListIssue | None = None   # why the walk stopped early or could not start; None: complete

    __nested__ = {"problem": ThreadListIssue}


@record
class ParkedRegisters:
    """A thread of a live target nobody stopped, as the kernel records it (native parked_registers())."""
    state: str                        # model.live_kinds.ParkState
    registers: dict[str, int] = field(default_factory=dict)  # the known ones only, by user_regs_struct name


@record
class LockIssue:
    """One thing odd about a lock's bytes (native LockIssue)."""
    kind: str                         # model.glibc_kinds.LockProblem
    fatal: bool = False               # the bytes cannot be such a lock (GlibcLock.plausible is False)
    value: int = 0                    # the field's value (a 64-bit word's bit pattern), or an offset
    other: int = 0                    # a second value, where the kind has one


@record
class GlibcLock:
    """A glibc lock as decoded from its bytes (native LockInfo); a field the
    layout does not have is None."""
    kind: str = ""                    # model.kinds.GlibcLockKind
    address: int = 0
    layout: str = ""                  # the layout the bytes were read with
    readable: bool = False            # False: the object could not be read at all
    plausible: bool = False           # its bytes look like an initialised lock of this kind
    problem: list[LockIssue] = field(default_factory=list)   # why not plausible, what is odd
    locked: bool | None = None
    owners: list[int] = field(default_factory=list)   # TIDs the lock word records
    owner_source: str = ""            # the field they were read from ("__owner", "__cur_writer", ...)
    write_locked: bool | None = None
    readers: int | None = None
    waiters: int | None = None
    read_waiters: int | None = None
    write_waiters: int | None = None
    recursion: int | None = None
    value: int | None = None          # a semaphore's value
    mutex: int | None = None          # a condvar's mutex, where the layout records it
    flags: list[str] = field(default_factory=list)    # model.kinds.LockFlag
    fields: dict[str, int] = field(default_factory=dict)   # every raw field of the layout

    __nested__ = {"problem": LockIssue}


@record
class Reason:
    """Points a lock candidate gained or lost, and why (native Reason)."""
    kind: str                         # model.glibc_kinds.ScoreReason
    points: int = 0
    hint: str | None = None           # frame-name: the model.kinds.WaitKind the frame's name says


@record
class Candidate:
    """A lock the identification considered (native Candidate): its score and why."""
    kind: str = ""                    # model.kinds.WaitKind
    address: int = 0
    score: int = 0
    layout: str = ""                  # the layout its bytes were read with ("" for a bare word)
    problem: list[LockIssue] = field(default_factory=list)   # what is odd about its bytes
    reasons: list[Reason] = field(default_factory=list)      # in the order scored; their points add up to score

    __nested__ = {"problem": LockIssue, "reasons": Reason}


@record
class HowIdentified:
    """How the native identification decided what a thread waits on."""
    kind: str                         # model.glibc_kinds.LockEvidence
    futex: int | None = None          # futex-call: the word it sleeps on
    futex_op: int | None = None       # ... and the futex operation
    hint: str | None = None           # the model.kinds.WaitKind the innermost libc frame names say
    best: Candidate | None = None     # futex-call: the candidate that won

    __nested__ = {"best": Candidate}


@record
class IdentifyFailure:
    """Why the native identification identified nothing."""
    kind: str                         # model.glibc_kinds.IdentifyProblem
    futex: int | None = None          # futex-unreadable: the word
    syscall: int | None = None        # not-futex-wait: frame 0's system call (orig_rax; -1 none)


@record
class LockIdentification:
    """What a thread sleeps on, from its registers and native frames
    (native LockReader.identify): the lock, its owners, how it was found."""
    kind: str | None = None           # model.kinds.WaitKind; None: not waiting on a lock
    address: int | None = None
    library: str | None = None        # the mapped object holding `address` (the collector adds it)
    symbol: str | None = None         # the ELF symbol holding `address`, "name" or "name+0x8" (the collector's)
    futex: int | None = None          # the futex word slept on
    futex_op: int | None = None
    futex_value: int | None = None
    restarted: bool = False           # read from a restart_syscall's saved arguments
    lock: GlibcLock | None = None
    owners: list[int] = field(default_factory=list)
    owner_source: str = "unknown"     # model.kinds.OwnerSource
    confidence: str | None = None     # model.kinds.Confidence
    evidence: HowIdentified | None = None   # how it was identified
    condvar_mutex: int | None = None
    problem: IdentifyFailure | None = None   # why nothing was identified
    candidates: list[Candidate] = field(default_factory=list)   # every candidate and its score, when asked to explain

    __nested__ = {"lock": GlibcLock, "evidence": HowIdentified, "problem": IdentifyFailure, "candidates": Candidate}


@record
class GlibcRelease:
    """The glibc release the lock decoders found (native LockReader.glibc) and the layouts chosen for it."""
    version: str = ""                 # "2.36"
    source: str = ""                  # where it was read ("__nptl_version", "version-definitions", "given")
    exact: bool = True                # False: only a lower bound of the release
    layouts: str | None = None        # the layouts' row ("glibc 2.41+"); None: none takes the release


@record
class CodeLine:
    """A Python function at a line: where a Python lock was found."""
    function: str = ""
    file: str = ""
    line: int = 0


@record
class PythonLockWait:
    """The threading object a thread sleeps on (native PythonLocks.wait):
    a Lock, RLock, Condition, the lock of a buffered stream, or what a join
    waits for; every field None or empty when it is none of them."""
    kind: str | None = None           # model.kinds.WaitKind (py-lock, py-rlock, py-condition, py-buffered-io)
    confidence: str | None = None
    object: int | None = None         # the lock object
    type_name: str | None = None
    wait_address: int | None = None   # the futex word inside it
    locked: bool | None = None
    owner_thread_id: int | None = None   # the pthread_t an RLock or buffered stream records
    owner_tid: int | None = None      # ... mapped to a thread of this process
    count: int | None = None          # an RLock's recursion
    owner_source: str = "unknown"
    suspects: list[int] = field(default_factory=list)   # threads whose stacks reference a Lock
    frame: CodeLine | None = None     # the frame the lock was found in
    condition: int | None = None
    condition_lock: int | None = None
    condition_lock_type: str | None = None
    condition_lock_locked: bool | None = None
    condition_lock_owner_thread_id: int | None = None
    condition_lock_owner_tid: int | None = None
    condition_lock_count: int | None = None
    suspect_frames: list[CodeLine] = field(default_factory=list)
    self_frames: list[CodeLine] = field(default_factory=list)   # a Lock: the waiter's own outer frames on it
    join_self: int | None = None      # the Thread a join waits for
    parking_address: int | None = None   # 3.13+: what a parking-lot waiter waits for
    join_frame_function: str | None = None
    stream_name: str | None = None
    found_in: str | None = None
    # how it was found (worded by render.locks): model.kinds.PyLockFound, the futex slept on, the frame slot
    # the object was in (None when found_in names where), whether a bound method of it was
    found: str | None = None
    futex: int | None = None
    slot: int | None = None
    via_method: bool = False
    problem: ReadProblem | None = None   # why nothing (or only part) was found
    scan_problem: ReadProblem | None = None    # a futex in no lock object found: what of the frames was unread

    __nested__ = {"frame": CodeLine, "suspect_frames": CodeLine, "self_frames": CodeLine, "problem": ReadProblem,
                  "scan_problem": ReadProblem}

    def is_wait(self):
        """Whether it names something the thread waits on (a lock, or a joined Thread)."""
        return bool(self.kind or self.join_self)


@record
class PythonLockEvidence:
    """How the Python-lock search found the lock a thread waits on
    (BlockedOn.evidence of a Python lock wait; worded by render.locks)."""
    found: str = ""                   # model.kinds.PyLockFound
    futex: int | None = None          # the futex slept on
    word: int | None = None           # the lock's sem_t or PyMutex
    type: str | None = None
    object: int | None = None
    found_in: str | None = None       # where an object no frame references was found
    slot: int | None = None           # ... else the frame slot it was in
    via_method: bool = False          # a bound method of it was in the slot
    frame: CodeLine | None = None
    condition: int | None = None      # Condition.wait: the Condition (its waiter lock is the one found)

    __nested__ = {"frame": CodeLine}


@record
class SyscallFacts:
    """What the blocking system call of a parked thread points at, as the
    analysis asked for it (analysis.gather.add_syscall_facts)."""
    # label → the argument read from target memory ("pollfds": [[fd, events]], "timeout": [s, ns],
    # "readfds": [fd], ...; None where unreadable), as analysis.syscalls.memory_wanted names them
    memory: dict[str, object] = field(default_factory=dict)
    clock_now_ns: int | None = None   # the time on the call's clock when the target was seen (live)
    proc_syscall: int | None = None   # restart_syscall: the call the kernel records (/proc .../syscall)
    children: list[int] | None = None   # vfork: the processes the thread made and has not reaped (/proc)


@record
class ApiWait:
    """The Python-level API a thread waits in (Queue.get, Event.wait,
    Future.result, an import lock, ...: analysis.python_api), its frame's
    `self` and the attributes read of it (model.python_values.ObjectValue by name)."""
    kind: str                          # model.kinds.WaitKind of the API
    object: int                        # its frame's `self`
    type: str | None = None            # the type of `self`
    frame: CodeLine | None = None
    attributes: dict[str, ObjectValue | None] | None = None
    referenced_by: list[int] | None = None   # the threads reaching `object` (asked for a Queue.get only)
    references_complete: bool | None = None
    # an Event.wait inside concurrent.futures.as_completed or wait: the Futures it still waits for, and which
    futures: list[int] | None = None
    futures_by: str | None = None      # "as_completed" or "wait"

    __nested__ = {"frame": CodeLine}
    __nested_maps__ = {"attributes": ObjectValue}


@record
class PoolWorker:
    """A ThreadPoolExecutor worker (analysis.python_api.worker_frame): its
    pool's work queue and, when it runs a work item, the Future it completes."""
    work_queue: int | None = None
    future: int | None = None


# ---- what the analysis found of a wait (BlockedOn's details) --------------

@record
class PythonLockDetail:
    """A threading Lock, RLock, Condition or buffered stream lock a thread
    waits on (BlockedOn.python, from analysis.locks.from_python)."""
    recursion: int | None = None        # an RLock's count
    owner_ident: int | None = None      # the pthread_t an RLock or buffered stream records
    owner_gone: bool = False            # ... which no thread of this process is
    locked: bool | None = None          # a Lock's state
    suspects: list[int] = field(default_factory=list)   # threads whose stacks reference a Lock
    suspect_frames: list[CodeLine] = field(default_factory=list)   # where, per suspect
    # a Lock: the waiter's own outer frames that reference it (innermost first): one may hold it
    self_frames: list[CodeLine] = field(default_factory=list)
    type: str | None = None             # a buffered stream's type ("_io.BufferedWriter")
    stream: str | None = None           # ... and its name ("'<stdout>'")
    found_in: str | None = None         # ... the variable it was found in
    condition_lock: int | None = None   # a Condition's lock
    condition_lock_type: str | None = None
    condition_lock_owner: int | None = None   # its holder's TID

    __nested__ = {"suspect_frames": CodeLine, "self_frames": CodeLine}


@record
class ApiDetail:
    """A wait inside a Python-level API (BlockedOn.api, from
    analysis.python_api.api_wait): what its `self` says."""
    type: str | None = None             # the class of `self` ("Queue")
    frame: CodeLine | None = None       # the API's frame
    api_file: str | None = None         # the module file the API lives in
    # the attributes the API is known by, by name ("_state", "maxsize", "_value", ...; "queue_length": the
    # length of a container attribute "queue"): ints or strings as read, None when unreadable
    values: dict[str, object] = field(default_factory=dict)
    primitive: dict | None = None       # {kind, address}: the lock or condition it sleeps on
    referenced_by: list[int] | None = None   # the threads reaching `self` (a Queue.get), None: not asked
    references_complete: bool | None = None
    asyncio: dict | None = None         # a Future an asyncio loop completes: {task, loop, thread}
    # an Event.wait inside concurrent.futures.as_completed or wait (futures_by): the Futures still waited for
    futures: list[int] | None = None
    futures_by: str | None = None

    __nested__ = {"frame": CodeLine}


@record
class JoinDetail:
    """Thread.join, or interpreter exit joining non-daemon threads (BlockedOn.join)."""
    name: str | None = None             # the joined Thread's name (one thread)
    names: list[str | None] = field(default_factory=list)   # every Thread waited for (interpreter exit)
    daemon: bool | None = None
    shutdown: bool = False              # at interpreter exit (threading._shutdown)
    exiting: str | None = None          # model.kinds.ExitPath: the join is part of the process's exit
    joined_by: str | None = None        # model.kinds.JoinEvidence


@record
class CollectiveDetail:
    """A torch.distributed collective a thread waits in (BlockedOn.collective,
    ThreadSnapshot.collective: analysis.collectives), as its frames say it."""
    function: str | None = None         # the collective (all_reduce, barrier, ...); None: a gloo worker's
    line: int | None = None
    backend: str | None = None          # gloo, nccl, ... from the process group's type
    group_type: str | None = None       # that type's name ("ProcessGroupGloo")
    rank: int | None = None
    world_size: int | None = None
    read_from: dict[str, dict] = field(default_factory=dict)   # "rank"/"world_size" → {function, file, line}
    native_wait: str | None = None      # what it sleeps on (a WaitKind, or the sleep's call)
    transport: str | None = None        # gloo's transport function a worker waits in for a peer


@record
class GrpcCallDetail:
    """A gRPC client call a thread waits in (BlockedOn.grpc: analysis.grpc_calls): its frame, what it sleeps
    on, and the channel's connections: the TCP or unix sockets gRPC's poller watches (the epoll instance the
    thread polls), each {fd, link, local, peer (the channel's target as the kernel says it), pids (the
    processes holding the other end on this machine; None: not found), peers ({pid, comm, title}),
    complete}."""
    frame: dict | None = None           # {function, file, line} of the call's frame in grpc/_channel.py
    native_wait: str | None = None      # the system call it polls in, or the WaitKind it sleeps on
    sockets: list[dict] = field(default_factory=list)
    fd_table: bool = False              # the process's fds are known (a live process, a pyhang gcore core)


@record
class FrameSelf:
    """The `self` of one of a thread's innermost Python frames (the
    frame_selves question: native PythonLocks.frame_selves)."""
    index: int = 0                      # the frame's index, innermost 0
    object: int | None = None           # its `self` (its first argument)
    type: str | None = None             # the type of `self`
    function: str = ""
    file: str = ""
    line: int = 0


# The calls that wait for a child (their `child` is said even when None: waitid on no one child), and the one
# whose `lock` says whether it waits for a lock.
CHILD_CALLS = ("wait4", "waitid", "vfork")   # vfork: the parent waits until its child execs or exits


@record
class HolderThreadWait:
    """A thread of a process holding the other end of what a thread waits
    on, and what the analysis reads of the call it is parked in
    (analysis.syscalls; from model.files.HolderThread)."""
    tid: int = 0
    comm: str | None = None
    syscall: str | None = None          # the call's name; None: in no call
    pid: int | None = None              # wait4: the process it waits for
    relevant: bool = False              # parked on the holder's fd for the object, or waiting for the waiter's process


@record
class SyscallWait:
    """A thread parked in a blocking system call other than futex
    (BlockedOn.syscall, from analysis.syscalls.syscall_wait): the call, its
    arguments as the call reads them, and what its fd is."""
    name: str | None = None             # the call ("read", "poll", "restart_syscall")
    number: int | None = None
    fd_table: bool = False              # the process's fds were read from /proc (not a core)
    fd: int | None = None               # the fd (or epoll fd) it waits on; None: a call without one
    object: FdObject | None = None      # what `fd` is (model.files; its holders' threads HolderThreadWaits); None: unknown
    watches_fds: bool = False           # poll / select: it waits on `fds`
    fds: list[dict] | None = None       # ... [{fd, direction, object: FdObject}] (at most 64); None: unreadable
    fds_count: int | None = None        # how many fds it watches
    timeout: dict | None = None         # {ns, absolute, clock, left_ns}; None: no timeout or not read
    child: int | None = None            # wait4 / waitid: the pid (or -1 any, 0 its group, < -1 a group)
    group: int | None = None            # waitid on a process group
    lock: bool | None = None            # fcntl: whether it is F_SETLKW / F_OFD_SETLKW
    lock_holders: list[FileLock] | None = None   # flock / fcntl: the processes /proc/locks names
    lock_mode: str | None = None        # flock: "shared" or "exclusive"
    lock_range: dict | None = None      # fcntl: {type "read"/"write", whence, start, length (0: to the end)}
    lock_ofd: bool | None = None        # fcntl: an open file description lock (F_OFD_SETLKW)
    restarts: dict | None = None        # restart_syscall: {syscall, source} of what it restarts; None: unknown
    restarted: bool = False             # named from frame 0 after restart_syscall resumed it (likely)

    def has_fd(self):
        return self.fd is not None

    def waits_for_child(self):
        return self.name in CHILD_CALLS


_NO_CALL = SyscallWait()


def syscall_of(b):
    """The SyscallWait of BlockedOn `b` when it waits in a system call (kind
    syscall), else an empty one (every field None): one shape for readers."""
    return b.syscall if b is not None and b.kind == WaitKind.SYSCALL and b.syscall is not None else _NO_CALL

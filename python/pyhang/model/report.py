"""The report: what pyhang concluded about every thread of one target.

Its JSON form (pyhang.render.json) is the "pyhang-report/1" contract of
docs/json-contract.md: keys may be added, never renamed.  Parts that a
command did not compute keep their empty value (None, [] or "unknown").
Sentences are not stored here: the renderer writes them from these facts.
"""
from __future__ import annotations
import re

from pyhang.model.record import field, from_data, record

from pyhang.model.kinds import Confidence, DeadlockKind, GilState, HazardKind, OwnerSource
from pyhang.model.proc_record import ProcSummary
from pyhang.model.python_values import LocalValue
from pyhang.model.hazard_facts import facts_from_data as hazard_facts_from_data
from pyhang.model.unread import ReadProblem
from pyhang.model.verdict_facts import AsyncioLoopBlockedFacts, GilHolderBlockedFacts, facts_from_data
from pyhang.model.warning_facts import StateIssue, TargetIssue
from pyhang.model.waits import ApiDetail, CollectiveDetail, GlibcLock, GrpcCallDetail, HowIdentified, JoinDetail, \
    LayoutsIssue, PythonLockDetail, PythonLockEvidence, SyscallWait


@record
class NativeFrame:
    pc: int
    function: str | None = None  # from ELF symbols; None when none covers pc
    library: str | None = None   # path of the mapped object
    offset: int = 0                 # pc - function start
    from_debug_file: bool = False   # named by the library's separate debug file (libc6-dbg), not its own symbols


def entry_frame(frames):
    """Where a thread waits, by name: the outermost named frame of the run of
    frames in the library it sleeps in (the function the program called into
    it, e.g. pthread_rwlock_wrlock rather than the helper below it); else the
    innermost named frame; None when none is named.  Only names the libraries
    themselves carry count: the answer is the same with or without debug
    files installed (libc6-dbg names libc's static helpers)."""
    def named(f):
        return f.function and not f.from_debug_file
    run = []
    for f in frames:
        if run and f.library != run[0].library:
            break
        run.append(f)
    in_run = [f for f in run if named(f)]
    if in_run:
        return in_run[-1]
    return next((f for f in frames if named(f)), None)


# Where the standard library and installed packages live: a frame there is
# not the program's own.
_LIBRARY = re.compile(r"(/lib/python\d[\d.]*/|/site-packages/|/dist-packages/|^<frozen )")


def program_frame(frames):
    """The innermost of `frames` (PythonFrames) that is the program's own (outside the
    standard library and installed packages): where it made the call that
    blocks; None when every frame is a library's."""
    return next((f for f in frames if not _LIBRARY.search(f.file or "")), None)


@record(frozen=True)
class CCall:
    """The C callable a Python frame calls (3.14+: read from the frame's value
    stack at the slot its call instruction names)."""
    function: str      # qualified: "time.sleep", "list.sort", "_thread.lock.acquire"
    repr: str          # repr(callable) as CPython writes it
    type: str          # its type: builtin_function_or_method, method_descriptor, ...
    confidence: str    # model.kinds.Confidence: certain, or likely (see analysis.python_state)
    address: int = 0


@record
class PythonFrame:
    function: str
    file: str
    line: int
    # With `report --locals`: [LocalValue] (model.python_values; PythonValues.frame_locals), and
    # what could not be read of them; None when locals were not asked for.
    locals: list[LocalValue] | None = None
    locals_problem: ReadProblem | None = None
    entry_frame: bool = False  # C called into the evaluation loop here (3.11+)
    # Where in its line the instruction is (3.11+ location table; -1 when not known): columns are
    # UTF-8 byte offsets into the line, end_col exclusive, as co_positions() gives them.
    end_line: int = -1
    col: int = -1
    end_col: int = -1
    # The line itself as the target's file reads (analysis.sources), stripped; None when unreadable.
    source: str | None = None
    source_indent: int = 0     # characters of white space `source` had before it
    c_call: CCall | None = None  # the C callable it calls; None when none is known
    # A signal handler: the signal it runs for (its arguments are that number and the frame it interrupted,
    # the next outer one, as the interpreter calls a handler); None: not seen to be one
    signal: int | None = None


@record
class BlockedOn:
    """What a thread waits on and who can release it."""
    kind: str                           # model.kinds.WaitKind
    address: int | None = None
    library: str | None = None       # the mapped object holding `address`
    symbol: str | None = None        # the ELF symbol holding `address` (a library's global: "drv_lock")
    name: str | None = None          # a global that refers to the object at `address` ("__main__.config_lock")
    owners: list[int] = field(default_factory=list)   # TIDs
    owner_source: str = OwnerSource.UNKNOWN
    owner_alive: bool | None = None  # every owner is a thread of this process
    confidence: str | None = None    # how sure the identification is (model.kinds.Confidence)
    # How it was identified, as the native side said it: the glibc identification's
    # model.waits.HowIdentified (render.glibc words it), the Python-lock search's
    # PythonLockEvidence (render.locks); None where the analysis identified it itself
    # (render.locks.evidence words that from `kind` and `lock`).
    evidence: HowIdentified | PythonLockEvidence | None = None
    condvar_mutex: int | None = None
    # What is known of what it waits on, by the kind of wait (model.waits; None where another kind):
    glibc: GlibcLock | None = None          # the glibc lock the native identification decoded
    python: PythonLockDetail | None = None  # a threading Lock, RLock, Condition, buffered stream lock
    api: ApiDetail | None = None            # a Python-level API (Queue.get, Future.result, ...)
    join: JoinDetail | None = None          # Thread.join, interpreter exit
    collective: CollectiveDetail | None = None   # a torch.distributed collective
    grpc: GrpcCallDetail | None = None      # a gRPC client call
    syscall: SyscallWait | None = None      # a system call (kind syscall; SQLite's busy handler: its sleep)


@record
class ThreadIssue:
    """What could not be read about a thread (a model.kinds.ThreadIssueKind), with the numbers and text it
    names; worded by render.names.thread_issues_text."""
    kind: str = ""
    number: int = 0
    other: int = 0
    text: str = ""


def thread_issues(data):
    """The ThreadIssues of `data` (to_data's list); None for none."""
    if not data:
        return None
    return [from_data(ThreadIssue, d) for d in data]


@record
class ThreadAccount:
    """Where one thread stands in the closed-world account (analysis.account): exactly one class."""
    state: str                          # model.kinds.ThreadState
    reason: str                         # model.kinds.AccountReason: why that class
    finding: str | None = None          # the verdict or hazard kind that says so, when one does
    threads: list[int] = field(default_factory=list)   # blocked, deadlocked: the threads it waits for
    pids: list[int] = field(default_factory=list)      # elsewhere: the processes it waits on, where known


@record
class ThreadLook:
    """What changed of one thread between the two no-stop looks of a second look (pyhang.second_look): the
    facts a thread that makes progress changes.  None where a look could not read it."""
    tid: int
    cpu_ticks: int | None = None         # utime + stime it used between the looks, in clock ticks
    voluntary: int | None = None         # voluntary context switches between the looks (it slept and woke)
    involuntary: int | None = None       # involuntary ones (it ran and was preempted)
    syscall_changed: bool | None = None  # its system call or arguments differ (/proc/PID/task/TID/syscall)
    stack_moved: bool | None = None      # its Python frames differ (function, file, line)
    gone: bool = False                   # it exited between the looks

    def moved(self):
        """The facts that say it made progress ([str]: "cpu", "switches", "syscall", "stack", "gone")."""
        out = []
        if self.cpu_ticks:
            out.append("cpu")
        if self.voluntary or self.involuntary:
            out.append("switches")
        if self.syscall_changed:
            out.append("syscall")
        if self.stack_moved:
            out.append("stack")
        if self.gone:
            out.append("gone")
        return out


@record
class SecondLook:
    """Two no-stop looks `interval` seconds apart after the report's own (pyhang.second_look)."""
    interval: float
    threads: list[ThreadLook] = field(default_factory=list)
    # why the looks could not be taken: {reason: model.kinds.ReaderFailure, path, number} (render.target words
    # it); None when they were
    problem: dict | None = None

    __nested__ = {"threads": ThreadLook}


@record(frozen=True)
class FramesOmitted:
    """The middle of a Python stack deeper than the native walker keeps (cpython::Options::max_frames
    innermost, outermost_frames outermost): `count` frames between python_frames[at - 1] and
    python_frames[at] were walked past, not kept."""
    at: int
    count: int


@record
class ThreadReport:
    tid: int
    gdb_num: int
    name: str | None = None
    python_name: str | None = None   # its threading.Thread's name
    gil: str = GilState.UNKNOWN
    # the interpreter it runs Python in, as CPython numbers them (main 0); None without a thread state
    interpreter: int | None = None
    # 3.12: other interpreters whose thread states carry this thread's id (3.12 reuses an interpreter's first
    # thread state on any thread): their frames are not shown (render words it with the thread's problem)
    hidden_interpreters: list[int] = field(default_factory=list)
    python_frames: list[PythonFrame] = field(default_factory=list)
    # the middle of a stack too deep to keep whole: frames not in python_frames; None when it is whole
    python_frames_omitted: FramesOmitted | None = None
    native_frames: list[NativeFrame] = field(default_factory=list)
    blocked_on: BlockedOn | None = None
    # what could not be read about this thread (its unwinding, gdb): ThreadIssues
    problem: list[ThreadIssue] | None = None
    # what of its Python thread state could not be read (the `python` answer's)
    # (a thread running in several interpreters, 3.13+: a list, one for each state that has one)
    python_problem: ReadProblem | list[ReadProblem] | None = None
    host_tid: int | None = None  # the host's TID, when the target's PID namespace gives it another (tid)
    # Native frame index of each evaluation-loop frame → indices of the Python frames it runs
    # (analysis.eval_frames); empty when they cannot be paired.
    python_at: dict[int, list[int]] = field(default_factory=dict)
    gc: "GcRun" | None = None    # this thread runs a garbage collection (analysis.gc); None: not seen to
    account: ThreadAccount | None = None   # its class in the closed-world account (analysis.account)
    # what a second look saw of it (analysis.progress): the facts that moved ([] none), None: no second look
    moved: list[str] | None = None
    # The thread that runs the interpreter's exit: model.kinds.ExitPath THREADING_SHUTDOWN or ATEXIT
    # (analysis.threading.exiting); None for every other thread, and while the interpreter is not exiting
    exiting: str | None = None


@record(frozen=True)
class GcRun:
    """How a thread is known to run a garbage collection."""
    confidence: str                       # model.kinds.Confidence: certain from its native stack, else likely
    native_function: str | None = None    # the collection function in its native stack
    native_frame: int | None = None       # its index (innermost 0), from a deeper unwind than the report shows
    finalizer_frame: int | None = None    # likely: the index of the Python frame that runs a finalizer (__del__)


@record
class TargetInfo:
    kind: str                        # "live", "core", "callback"
    pid: int | None = None        # as gdb (the host) knows it
    core: str | None = None
    executable: str | None = None
    python_version: str | None = None
    namespace_pid: int | None = None  # its pid in its own PID namespace, when that differs
    parent_pid: int | None = None  # live: /proc/PID/stat; core: NT_PRPSINFO pr_ppid (for process trees)
    executable_problem: TargetIssue | None = None  # why the executable's file could not be read here (TargetFacts')
    proc_record: ProcSummary | None = None  # a core's record of /proc, made by pyhang gcore (TargetFacts')

    __nested__ = {"proc_record": ProcSummary, "executable_problem": TargetIssue}


@record
class GilSummary:
    locked: bool | None = None
    holder_tid: int | None = None
    waiters: list[int] = field(default_factory=list)


@record
class Edge:
    """`waiter` waits for something `owner` holds."""
    waiter: int
    owner: int
    kind: str
    address: int | None
    source: str                  # OwnerSource of the owner
    evidence: HowIdentified | PythonLockEvidence | None = None   # how a decoder found the owner (BlockedOn.evidence of the waiter)
    # what the heuristic that found it concluded from, for render to word: the record of that heuristic, one of
    # model.edge_facts.FACTS; None for an edge a decoder read for sure (its JSON `facts` is {})
    facts: object = None


@record
class Deadlock:
    threads: list[int]
    confidence: str
    edges: list[Edge]
    kind: str = DeadlockKind.THREADS     # model.kinds.DeadlockKind
    tasks: list["AsyncioTask"] = field(default_factory=list)   # an await cycle's tasks, in cycle order
    # A cycle that stands for every guessed cycle of its strongly connected component (analysis.waitgraph):
    # {"threads": its TIDs, "cycles": how many were counted, "all_counted", "guessed_edges"}; None otherwise.
    component: dict | None = None


@record
class Verdict:
    """A blocked situation without a cycle (model.kinds.VerdictKind), with
    the facts its sentence is written from: the record of its kind
    (model.verdict_facts.FACTS; a dict, as given, only for a kind this
    pyhang does not know).  Facts given as a dict (an older report's data)
    are made that record; none, the record of a kind that has no fields
    but `moved`."""
    kind: str
    threads: list[int]
    facts: object = None

    def __post_init__(self):
        if self.facts is None or isinstance(self.facts, dict):
            self.facts = facts_from_data(self.kind, self.facts or {})


@record
class Report:
    target: TargetInfo
    threads: list[ThreadReport] = field(default_factory=list)
    gil: GilSummary = field(default_factory=GilSummary)
    deadlocks: list[Deadlock] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    fork_hazards: list["Hazard"] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    fork_analysis: "ForkAnalysis" | None = None     # fork-hazards' full evidence
    # what could not be read: the target's (model.warning_facts.TargetIssue, worded by render.target), the
    # interpreter reader's (StateIssue, render.interpreter)
    warnings: list[TargetIssue | StateIssue] = field(default_factory=list)
    python_status: str | None = None                # model.kinds.PythonStatus of the interpreter
    lock_problem: LayoutsIssue | None = None   # why glibc's lock layouts are not known
    lock_caveat: LayoutsIssue | None = None         # why the layouts used need a caveat (render words it a warning)
    cycles_truncated: bool = False                     # more deadlock cycles than are listed
    unanswered: int = 0                             # questions a replayed snapshot held no answer for
    exit_status: int = 0                            # model.kinds.ExitStatus (analysis.completeness.exit_status)
    asyncio: list["AsyncioLoop"] | None = None      # None: not collected; [] no asyncio loop or task
    gc_collecting: bool | None = None               # a garbage collection is in progress; None: not known
    second_look: SecondLook | None = None           # the looks after the report's (analysis.progress); None: one look
    # A live process's children (/proc), which its report does not look at (the command line's `report -p`);
    # None when not read
    children: list[int] | None = None

    def thread(self, tid):
        return next((t for t in self.threads if t.tid == tid), None)


@record
class InterpreterGil:
    """One GIL (one per interpreter on 3.12+) and the threads around it:
    what `gil-holder` shows."""
    interp_id: int                      # -1: the process-wide GIL (before 3.12, or not known)
    locked: bool | None = None
    holder_tid: int | None = None    # None when no thread state holds it
    holder_blocked: GilHolderBlockedFacts | None = None   # python_state.holder_blocked() of the holder
    waiting: list[int] = field(default_factory=list)
    released: list[int] = field(default_factory=list)


@record
class Hazard:
    """Something a fork child inherited that can never be released."""
    kind: str                   # model.kinds.HazardKind
    threads: list[int]          # the threads it blocks (none: the whole process)
    confidence: str             # model.kinds.Confidence
    variant: str                # which of the kind's findings ("" when it has one)
    # the record of its kind and variant (model.hazard_facts.FACTS); given as a dict (older data), made that
    # record; a dict, as given, only for a kind or variant this pyhang does not know
    facts: object = None

    def __post_init__(self):
        self.threads = sorted(self.threads)
        if self.facts is None or isinstance(self.facts, dict):
            self.facts = hazard_facts_from_data(self.kind, self.variant, self.facts or {})

    @property
    def hangs(self):
        """Whether the hazard is a hang in itself, not a risk: a lock copied
        locked by fork, or threads inside an OpenMP pool that fork did not
        copy (certain: the pool's threads are gone and a thread waits in it)."""
        if self.kind == HazardKind.ORPHANED_LOCK:
            return True
        # (a gRPC call in a child whose gRPC threads fork did not copy, too: GRPC_AFTER_FORK)
        return self.kind in (HazardKind.OPENMP_AFTER_FORK, HazardKind.GRPC_AFTER_FORK) and \
            self.confidence == Confidence.CERTAIN and bool(self.threads)


@record
class ForkAnalysis:
    """What `fork-hazards` found: whether this is a fork child that did
    not exec and why pyhang thinks so, the hazards, what was checked and
    what could not be read.  Evidence and checks are (what, facts) pairs."""
    hazards: list[Hazard] = field(default_factory=list)
    child: bool = False
    child_evidence: list[tuple] = field(default_factory=list)
    parent_pid: int | None = None
    checked: list[tuple] = field(default_factory=list)
    # what could not be read: a ForkIssue (model.fork_facts), a DescriptorsIssue, the interpreter's own
    # (ReadProblems)
    problems: list[object] = field(default_factory=list)


@record
class Awaited:
    """What an asyncio task awaits."""
    kind: str                           # model.kinds.AwaitKind
    address: int | None = None       # the future (or task) its coroutine waits on
    type: str | None = None
    state: str | None = None         # the future's FutureState
    tasks: list[str] = field(default_factory=list)   # the task(s) it waits for, by name (task, gather, shield)
    task_addresses: list[int] = field(default_factory=list)
    obj: int | None = None           # the Lock/Event/Queue/... waited on, when read
    obj_type: str | None = None
    when: float | None = None        # a sleep's deadline in loop time (time.monotonic of the target)
    remaining: float | None = None   # seconds from the collection to that deadline (live targets)
    thread: int | None = None        # the thread that must complete it (an executor job's)
    chained: int | None = None       # the concurrent.futures.Future chained to it


@record
class AsyncioTask:
    name: str
    address: int
    state: str                          # FutureState: pending, finished, cancelled
    native: bool = True                 # _asyncio's C Task
    stack: list[PythonFrame] = field(default_factory=list)   # the coroutine chain, innermost first
    awaits: Awaited | None = None
    running: bool = False               # the task its loop is stepping now
    exception_type: str | None = None
    exception_unretrieved: bool = False  # finished with an exception nobody retrieved
    completes_for: list[int] = field(default_factory=list)   # threads waiting on futures this task completes
    problem: ReadProblem | None = None   # what could not be read


@record
class AsyncioLoop:
    """One event loop, the thread running it and its tasks."""
    address: int
    type: str | None = None
    thread: int | None = None        # the LWP running it; None when no thread runs it now
    ready: int | None = None         # callbacks ready to run
    scheduled: int | None = None     # timers
    running_task: str | None = None  # the task being stepped now
    blocked: AsyncioLoopBlockedFacts | None = None   # the loop's thread is blocked inside a step (analysis.asyncio)
    tasks: list[AsyncioTask] = field(default_factory=list)

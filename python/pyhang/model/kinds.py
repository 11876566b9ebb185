"""The fixed vocabularies of the report, each in one place.  The values are
the strings of the JSON contract (docs/json-contract.md).  What the glibc
decoders found about a lock or libc's descriptors has its vocabularies in
model/glibc_kinds.py."""


class GilState:
    """What a thread is doing with respect to its interpreter's GIL."""
    HOLDS = "holds"
    WAITING = "waiting"
    RELEASED = "released"
    NO_PYTHON = "no-python"   # the thread has no Python thread state
    UNKNOWN = "unknown"       # the interpreter could not be read
    ALL = (HOLDS, WAITING, RELEASED, NO_PYTHON, UNKNOWN)


class Confidence:
    """How sure an identification or a deadlock is."""
    CERTAIN = "certain"
    LIKELY = "likely"
    GUESS = "guess"
    ALL = (CERTAIN, LIKELY, GUESS)


class OwnerSource:
    """Where the owner of what a thread waits on was read from."""
    LOCK_WORD = "lock-word"     # the lock records it (mutex __owner, RLock owner, ...)
    GIL_STATE = "gil-state"     # the GIL's holder
    THREAD_TID = "thread-tid"   # pthread_join: the joined thread's own tid word
    THREAD_OBJECT = "thread-object"   # Thread.join: the threading.Thread joined names its thread
    HEURISTIC = "heuristic"     # inferred (driver-lock heuristics), never certain
    ASYNCIO_LOOP = "asyncio-loop"   # a future only an asyncio task or ready callback completes: its loop's thread
    WORK_ITEM = "work-item"     # a concurrent.futures.Future whose executor work item a worker thread runs
    OTHER_RANKS = "other-ranks"   # a distributed collective: the other ranks of its group, other processes
    UNKNOWN = "unknown"


class WaitKind:
    """The `blocked_on.kind` values pyhang produces today (the contract lets
    the list grow)."""
    MUTEX = "mutex"
    RWLOCK_READ = "rwlock-read"
    RWLOCK_WRITE = "rwlock-write"
    RWLOCK = "rwlock"           # a rwlock whose side (read or write) could not be told
    SEMAPHORE = "semaphore"
    CONDVAR = "condvar"
    FUTEX = "futex"
    GLIBC_INTERNAL = "glibc-internal-lock"
    THREAD_JOIN = "thread-join"
    GIL = "gil"
    PY_LOCK = "py-lock"
    PY_RLOCK = "py-rlock"
    PY_CONDITION = "py-condition"
    PY_JOIN = "py-join"         # threading.Thread.join, or interpreter exit joining non-daemon threads
    PY_QUEUE_GET = "py-queue-get"     # queue.Queue.get on an empty queue
    PY_QUEUE_PUT = "py-queue-put"     # queue.Queue.put on a full queue
    PY_QUEUE_JOIN = "py-queue-join"   # queue.Queue.join: until task_done() was called for every item put
    PY_SEMAPHORE = "py-semaphore"     # threading.Semaphore / BoundedSemaphore.acquire
    PY_EVENT = "py-event"             # threading.Event.wait
    PY_BARRIER = "py-barrier"         # threading.Barrier.wait
    PY_FUTURE = "py-future"           # concurrent.futures.Future.result / exception
    PY_IMPORT_LOCK = "py-import-lock"  # an import waiting for another thread's module lock
    PY_BUFFERED_IO = "py-buffered-io"  # the internal lock of an io.BufferedWriter / BufferedReader / BufferedRandom
    SYSCALL = "syscall"               # parked in a blocking system call other than futex (analysis.syscalls)
    SQLITE_BUSY = "sqlite-busy"       # asleep in SQLite's busy handler: another connection holds a database lock
    COLLECTIVE = "collective"         # in a torch.distributed collective (all_reduce, barrier, ...): the other ranks
    GRPC_CALL = "grpc-call"           # a gRPC client call (a blocking unary call) waiting for its server's answer


class GlibcLockKind:
    """The kind of a decoded glibc lock (model.waits.GlibcLock.kind; the native LockType name table)."""
    MUTEX = "mutex"
    MUTEX_NORMAL = "mutex-normal"
    MUTEX_RECURSIVE = "mutex-recursive"
    MUTEX_ERRORCHECK = "mutex-errorcheck"
    MUTEX_ADAPTIVE = "mutex-adaptive"
    RWLOCK = "rwlock"
    SEMAPHORE = "semaphore"
    CONDVAR = "condvar"


class LockFlag:
    """What a decoded glibc lock's bytes say of it (model.waits.GlibcLock.flags; the native LockFlag name table)."""
    ROBUST = "robust"
    PI = "pi"
    PP = "pp"
    PSHARED = "pshared"
    WAITERS = "waiters"
    OWNER_DIED = "owner-died"
    INCONSISTENT = "inconsistent"
    NOT_RECOVERABLE = "not-recoverable"
    PREFER_WRITER = "prefer-writer"
    PREFER_WRITER_NONRECURSIVE = "prefer-writer-nonrecursive"
    READ_WAITERS = "read-waiters"
    WRITE_WAITERS = "write-waiters"
    CLOCK_MONOTONIC = "clock-monotonic"
    DESTROY_PENDING = "destroy-pending"


class QueueType:
    """The class of the queue a `py-queue-get` waits on, when it is not
    queue.Queue's own get (its `detail`'s "type")."""
    SIMPLE = "SimpleQueue"   # queue.SimpleQueue: a C get, found by the Python-lock search on its caller's frame


class JoinEvidence:
    """How a `py-join` wait was found: its BlockedOn.join.joined_by.  Not
    in the JSON itself: the renderer words the wait's `evidence` from it."""
    TSTATE_LOCK = "tstate-lock"         # Thread.join sleeps on the joined Thread's _tstate_lock
    HANDLE = "handle"                   # Thread.join (3.13+) sleeps on the joined Thread's _handle
    SHUTDOWN_HANDLE = "shutdown-handle"   # interpreter exit, parked on the exit event of one Thread's _handle
    SHUTDOWN_ACTIVE = "shutdown-active"   # interpreter exit: the non-daemon threads of threading._active


class ExitPath:
    """How a thread joining another is part of its process's exit (model.waits.JoinDetail.exiting), from its
    Python frames."""
    QUEUE_FEEDER = "queue-feeder"   # multiprocessing's exit finalizers join a Queue's feeder thread
    FINALIZERS = "finalizers"       # multiprocessing's exit finalizers (util._exit_function), another join
    # The thread that runs the interpreter's exit (ThreadReport.exiting), once threading._shutdown has begun:
    THREADING_SHUTDOWN = "threading-shutdown"   # in threading._shutdown: it joins every non-daemon thread
    ATEXIT = "atexit"                           # after it: atexit callbacks (and the finalizers they run)


class MergeProblem:
    """Why `pyhang merge` could not take (all of) a file (the kind of each
    of analysis.merge's problems; the renderer words it, its facts in hand)."""
    UNREADABLE = "unreadable"       # the file cannot be opened or read {"error"}
    NOT_JSON = "not-json"           # {"error"}
    NOT_A_REPORT = "not-a-report"   # a schema merge does not take {"schema", "expected"}
    NO_THREADS = "no-threads"       # a report document without its threads list {"schema"}
    NO_PROCESSES = "no-processes"   # a tree document without its processes list {"schema"}
    NOT_EXAMINED = "not-examined"   # a process of a tree that was not examined {"pid", "problem"}
    # a job's nodes (pyhang job: the stream of pyhang-rank/1 documents each node's pyhang job-node prints)
    OTHER_VERSION = "other-version"     # a document of a schema this pyhang does not read {"schema", "version"}
    GARBAGE = "garbage"                 # lines of a node's stream that are no JSON document {"lines", "first"}
    TRUNCATED = "truncated"             # a stream that ends without its pyhang-node/1 document {"ranks"}
    NODE_TIMEOUT = "node-timeout"       # a node that did not answer within its deadline {"deadline", "ranks"}
    NODE_FAILED = "node-failed"         # a node whose launcher or pyhang failed {"status", "error"}
    NODE_PROBLEM = "node-problem"       # what a node's pyhang said it could not do {"problem"}
    NO_RANKS = "no-ranks"               # a node that runs no process of the job {"found_by"}
    RANK_NOT_READ = "rank-not-read"     # a process of the job whose report could not be made {"pid", "problem"}


class TreeEdgeKind:
    """Waits across processes (pyhang.analysis.tree)."""
    CHILD_EXIT = "child-exit"           # wait4/waitid: the child's threads must end
    PIPE_OTHER_END = "pipe-other-end"   # a pipe read or write: the processes holding the other end
    SOCKET_PEER = "socket-peer"         # a unix socket: the processes holding its peer
    FILE_LOCK = "file-lock"             # flock/fcntl: the processes /proc/locks names as holders
    WORK_GIVER = "work-giver"           # an idle thread waits for work: any other thread of its process may give it
    POOL_RESULT = "pool-result"         # a multiprocessing Pool's result wait: any of the pool's workers may be
                                        # the one running its task


class VerdictKind:
    """Blocked-without-a-cycle situations the report states."""
    GIL_NOBODY_HOLDS = "gil-nobody-holds"
    GIL_HANDOVER = "gil-handover"   # the GIL is free, some threads wait for it, other Python threads do not
    GIL_HOLDER_BLOCKED = "gil-holder-blocked"
    OWNER_GONE = "owner-gone"
    HOLDER_EXITED = "holder-exited"   # a Lock that records no owner, locked, whose holder most likely ended
    OWNERS_UNKNOWN = "owners-unknown"   # blocked on something whose owner pyhang cannot name
    NOTHING_CAN_WAKE = "nothing-can-wake"  # a Queue.get whose queue no other thread reaches
    EXECUTOR_STARVATION = "executor-starvation"  # every worker of a pool waits for a pending future
    ASYNCIO_LOOP_BLOCKED = "asyncio-loop-blocked"   # an event loop's thread blocked inside a task's step
    POOL_IDLE = "pool-idle"   # native thread-pool workers (libgomp, ...) waiting for work
    WAITS_ON_PROCESS = "waits-on-process"   # a pipe or socket wait whose other end only other processes hold
    POOL_TASK_LOST = "pool-task-lost"   # (a tree's) a Pool result waited for while every worker waits for a task
    SERVER_DIED = "server-died"   # (a tree's) a pipe or socket wait no live holder serves, one that would have died
    COLLECTIVE_MISMATCH = "collective-mismatch"   # (a tree's) ranks of one job wait in different collectives
    IDLE = "idle"   # Event/Condition/Queue waits and executor workers between tasks, nothing waiting on them
    INCOMPLETE = "incomplete"   # what pyhang needs could not be read (model.kinds.Unread): no all-clear possible
    UNACCOUNTED = "unaccounted"   # waits no other finding explains and pyhang does not model: their raw facts
    NO_PROGRESS = "no-progress"   # a second look: unaccounted waits that did not move, nor did anything to end them
    HELD_ACROSS_SLEEP = "held-across-sleep"   # threads wait for a lock whose holder sleeps long (analysis.held)


class ThreadState:
    """A thread's class in the closed-world account (analysis.account): each thread is in exactly one."""
    RUNNING = "running"           # in no blocking wait
    IDLE = "idle"                 # waits for work anyone may give, a signal, or a time
    BLOCKED = "blocked"           # waits on threads of this process (edges), in no cycle
    DEADLOCKED = "deadlocked"     # in a cycle
    HUNG = "hung"                 # a hang without a cycle names it
    ELSEWHERE = "elsewhere"       # waits on an owner that is gone, or on another process
    UNACCOUNTED = "unaccounted"   # waits on something pyhang cannot name or does not model
    ALL = (RUNNING, IDLE, BLOCKED, DEADLOCKED, HUNG, ELSEWHERE, UNACCOUNTED)
    PROBLEMS = (DEADLOCKED, HUNG, ELSEWHERE, UNACCOUNTED)   # no all-clear while a thread is in one


class AccountReason:
    """Why a thread is in its class (ThreadAccount.reason)."""
    ON_CPU = "on-cpu"                     # running: in no blocking call
    GIL_FREE = "gil-free"                 # running: takes a GIL no thread holds (a hand-over)
    WAITS_FOR_WORK = "waits-for-work"     # idle: the idle or pool-idle verdict
    POOL_WORK = "pool-work"               # idle: a multiprocessing Pool's loop waiting for a task, a result or a
                                          # worker's exit, which the pool's other processes give
    TIMED = "timed"                       # idle: a sleep, or a wait with a timeout
    SELECTOR = "selector"                 # idle: epoll_wait, or a poll/select on a listener or event fd
    LISTENER = "listener"                 # idle: accept
    SIGNAL = "signal"                     # idle: pause, sigsuspend, sigwait
    TERMINAL = "terminal"                 # idle: reads a terminal (the user's input)
    OWNER = "owner"                       # blocked: on the threads its edges lead to
    CYCLE = "cycle"                       # deadlocked
    FINDING = "finding"                   # hung: the finding says why
    OWNER_GONE = "owner-gone"             # elsewhere: the owner exited, or was not copied by fork
    OTHER_PROCESS = "other-process"       # elsewhere: a pipe's or socket's other end only other processes hold
    CHILD = "child"                       # elsewhere: waits for a child to exit
    FILE_LOCK = "file-lock"               # elsewhere: a file lock another process holds
    PEER = "peer"                         # elsewhere: a socket whose peer is no process of this machine found
    OWNERS_UNKNOWN = "owners-unknown"     # unaccounted: the owners-unknown verdict's
    UNREAD = "unread"                     # unaccounted: what it waits on could not be read (lock layouts)
    NO_FD_TABLE = "no-fd-table"           # unaccounted: a core records no fd table: the other end is unknown
    OWN_PROCESS = "own-process"           # unaccounted: only this process holds the other end (or the file lock)
    HOLDERS_UNKNOWN = "holders-unknown"   # unaccounted: who holds the other end (or the lock) could not be read
    NO_OTHER_END = "no-other-end"         # unaccounted: a pipe nobody holds the other end of (the call returns)
    NOT_MODELED = "not-modeled"           # unaccounted: a wait pyhang does not model
    NO_PROGRESS = "no-progress"           # hung: a second look saw it and every thread that could end it not move
    SHARED_FUTEX = "shared-futex"         # unaccounted: a process-shared futex (multiprocessing's locks): another
                                          # process may wake it
    SLEEP_UNKNOWN = "sleep-unknown"       # unaccounted: its lock's holder sleeps until a deadline a core (no
                                          # clock) cannot measure


class HolderEvidence:
    """Why a `holder-exited` verdict takes a Lock's holder for gone (its facts' "evidence")."""
    MANAGER_CLIENT = "manager-client"   # the waiter serves a multiprocessing manager's client: the managed
                                        # object is the server's, and the thread that took it served a client


class ServerEvidence:
    """Why a `server-died` verdict takes a dead child for a server of the wait (its facts' dead[].evidence):
    a dead process's fds cannot be read."""
    SIBLINGS_HOLD = "siblings-hold"   # other children of its parent (made alike: a pool's) hold the other end
    PARENT_HOLDS = "parent-holds"     # killed by a signal, and its parent holds the other end, which a fork
                                      # child inherits


class Unread:
    """What an `incomplete` verdict says could not be read (its facts' "unread")."""
    PYTHON_STATE = "python-state"   # a Python process whose interpreter state pyhang cannot read
    LOCK_LAYOUTS = "lock-layouts"   # glibc's lock layouts unknown while threads sleep on futexes


class PythonEvidence:
    """Why a process whose Python state could not be read is a Python process
    (an `incomplete` verdict's facts' "python_evidence")."""
    RUNTIME = "runtime"         # an object defines CPython's runtime symbols (_PyRuntime, ...)
    LIBRARY = "library"         # a thread runs code in a libpython
    EXECUTABLE = "executable"   # the executable (or a library on a stack) is named like CPython's (python3.X)


class PythonStatus:
    """The state of the interpreter as the native decoder found it."""
    OK = "ok"
    NOT_PYTHON = "not-python"
    STARTING = "starting"
    FINALIZING = "finalizing"
    UNSUPPORTED = "unsupported"   # a CPython version pyhang has no layout for
    UNREADABLE = "unreadable"     # the runtime state could not be read (memory missing or damaged)


class ExitStatus:
    """What a report concluded, as the command line's exit status and the
    JSON's `exit_status` (docs/json-contract.md): one number a script can trust."""
    OK = 0            # nothing hung that pyhang could see, and it read what it needs to say so
    FAILED = 1        # pyhang could not look at the target
    USAGE = 2         # the arguments are wrong
    NO_PYTHON = 2     # report: the target runs no Python and nothing hung was seen: the question does not apply
    DEADLOCK = 3      # a cycle of waits
    INCOMPLETE = 4    # no deadlock found, but what rules one out could not be read
    HUNG = 5          # a hang that is no cycle: starvation, a blocked event loop, an owner gone, ...


class HazardKind:
    """What a fork child inherited that can never be released."""
    ORPHANED_LOCK = "orphaned-lock"
    OPENMP_AFTER_FORK = "openmp-after-fork"
    GRPC_AFTER_FORK = "grpc-after-fork"   # a gRPC call in a child forked after gRPC's threads started
    CUDA_AFTER_FORK = "cuda-after-fork"
    THREADS_AT_FORK = "threads-at-fork"
    FORK_START_METHOD = "fork-start-method"
    COW_REFCOUNT = "cow-refcount"


class Forker:
    """What forked a fork child, as its frames show (a fork hazard's facts'
    "forked_by"): the fix of a hazard depends on it (render.forks advice)."""
    GUNICORN = "gunicorn"               # gunicorn's arbiter forked it as a worker (arbiter.py / workers/ frames)
    OTHER = "other"                     # multiprocessing, os.fork, ...: the default advice (multiprocessing's)


# Verdicts that are a hang without a cycle: nothing in the process can end
# these waits (the fork hazard of a lock held at fork is one too).
HANG_VERDICTS = (VerdictKind.EXECUTOR_STARVATION, VerdictKind.ASYNCIO_LOOP_BLOCKED, VerdictKind.OWNER_GONE,
                 VerdictKind.HOLDER_EXITED,
                 VerdictKind.NOTHING_CAN_WAKE, VerdictKind.GIL_HOLDER_BLOCKED, VerdictKind.GIL_NOBODY_HOLDS,
                 VerdictKind.POOL_TASK_LOST, VerdictKind.SERVER_DIED, VerdictKind.COLLECTIVE_MISMATCH,
                 VerdictKind.NO_PROGRESS, VerdictKind.HELD_ACROSS_SLEEP)

# What is wrong, most serious first, after any deadlock: the order of a
# report's first lines and of its verdicts.  A hang without a cycle, then
# what could not be read or named, then what is only worth knowing.
SEVERITY = (VerdictKind.EXECUTOR_STARVATION, VerdictKind.POOL_TASK_LOST, VerdictKind.SERVER_DIED,
            VerdictKind.COLLECTIVE_MISMATCH, VerdictKind.ASYNCIO_LOOP_BLOCKED,
            HazardKind.ORPHANED_LOCK, HazardKind.OPENMP_AFTER_FORK, HazardKind.GRPC_AFTER_FORK,
            VerdictKind.GIL_HOLDER_BLOCKED, VerdictKind.GIL_NOBODY_HOLDS, VerdictKind.NOTHING_CAN_WAKE,
            VerdictKind.NO_PROGRESS, VerdictKind.HELD_ACROSS_SLEEP,
            VerdictKind.OWNER_GONE, VerdictKind.HOLDER_EXITED, VerdictKind.INCOMPLETE, VerdictKind.WAITS_ON_PROCESS,
            VerdictKind.OWNERS_UNKNOWN, VerdictKind.UNACCOUNTED,
            VerdictKind.GIL_HANDOVER, VerdictKind.POOL_IDLE, VerdictKind.IDLE)


def severity(kind):
    """The rank of a verdict or fork-hazard kind in SEVERITY (0 most serious);
    a kind not listed comes after every listed one."""
    return SEVERITY.index(kind) if kind in SEVERITY else len(SEVERITY)


class LocalKind:
    """Where a frame's local lives (the native LocalKind name table)."""
    ARGUMENT = "argument"
    LOCAL = "local"
    CELL = "cell"
    FREE = "free"
    F_LOCALS = "f_locals"
class AwaitKind:
    """What an asyncio task awaits (the report's asyncio tasks[].awaits.kind)."""
    TASK = "task"                 # another task
    GATHER = "gather"             # asyncio.gather's future: its children
    SLEEP = "sleep"               # asyncio.sleep: a timer completes it
    LOCK = "lock"                 # asyncio.Lock.acquire
    SEMAPHORE = "semaphore"       # asyncio.Semaphore / BoundedSemaphore.acquire
    EVENT = "event"               # asyncio.Event.wait
    CONDITION = "condition"       # asyncio.Condition.wait
    QUEUE_GET = "queue-get"       # asyncio.Queue.get on an empty queue
    QUEUE_PUT = "queue-put"       # asyncio.Queue.put on a full queue
    EXECUTOR = "executor"         # run_in_executor: a pool thread runs the job
    THREAD_FUTURE = "thread-future"   # a concurrent.futures.Future chained to it (wrap_future)
    FUTURE = "future"             # any other future


class FutureState:
    """An asyncio future's or task's state (the native FutureState name table)."""
    UNKNOWN = "unknown"
    PENDING = "pending"
    CANCELLED = "cancelled"
    FINISHED = "finished"


class TargetWarning:
    """What about a target could not be read or trusted (ProcessSnapshot.warnings' kind): the native
    TargetProblem name table's, then the collectors' own.  Worded by render.target."""
    SYMBOLS_UNREADABLE = "symbols-unreadable"       # path; text: a ReaderFailure, number its errno, other_text the file
    BUILD_ID_MISMATCH = "build-id-mismatch"         # path; text: the build-id here, other_text the core's
    CORE_TRUNCATED = "core-truncated"               # path; number of other bytes missing
    CORE_FILES_MALFORMED = "core-files-malformed"   # path
    CORE_NO_THREAD = "core-no-thread"               # path
    CORE_NO_FILES = "core-no-files"                 # path
    NO_EXECUTABLE_GIVEN = "no-executable-given"     # gdb was given none
    OTHER_EXECUTABLE = "other-executable"           # given: gdb's, path: the target's own
    FILES_MISSING = "files-missing"                 # number of other mapped files missing here (a core)
    ZEROED_STACKS = "zeroed-stacks"                 # tids: a core holds zeros at their stack pointers
    NOT_STOPPED = "not-stopped"                     # read without stopping the process
    NOT_STOPPED_FOR_TRANSFER = "not-stopped-for-transfer"   # tid, call, fd, what: a stop would cut it short
    GIL_MOVED = "gil-moved"                         # the GIL changed hands between two reads
    # a core's /proc record (pyhang.proc_record) that is not used: path the core
    PROC_RECORD_DAMAGED = "proc-record-damaged"     # text: what is wrong with it
    PROC_RECORD_OTHER_VERSION = "proc-record-other-version"   # text: its schema, other_text ours, given: its pyhang
    PROC_RECORD_OTHER_CORE = "proc-record-other-core"   # number: its pid, other: the core's; text, other_text: the
                                                        # core it names and this one (when the pids agree)
    # the analysis's own: a fact it asked for was read in part (problem: a model.unread.ReadProblem)
    THREADING_INCOMPLETE = "threading-incomplete"   # threading's Thread objects
    ASYNCIO_INCOMPLETE = "asyncio-incomplete"       # asyncio's tasks and loops



class ThreadIssueKind:
    """What could not be read about a thread, as its collector says it (model.report.ThreadIssue.kind).
    Worded by render.names.thread_issues_text."""
    CANNOT_UNWIND = "cannot-unwind"            # text: gdb's error
    CANNOT_SELECT = "cannot-select"            # text: gdb's error
    LISTED_TWICE = "listed-twice"              # number: the TID in its PID namespace, other: the host's
    STACK_CUT = "stack-cut"                    # number: the frames read; text: where the unwinder stopped (UnwindStop)
    RUNNING = "running"                        # read without stopping it: no registers, no native frames
    NO_SYSCALL_RECORD = "no-syscall-record"    # text: the state its /proc record gave
    FRAMES_MOVED = "frames-moved"              # its Python frames changed between two reads (it was running)
    NOT_STOPPED = "not-stopped"                # pyhang's own stop: number: the ms it waited for this thread to stop


class ReaderFailure:
    """Why a target or file could not be opened at all (the native ErrorReason name table: a
    ReaderError's `reason`, with its `path` and `number`).  Worded by render.target.reader_failure."""
    OTHER = "other"
    CANNOT_OPEN = "cannot-open"           # number: errno
    CANNOT_MAP = "cannot-map"             # number: errno
    MAPS_UNREADABLE = "maps-unreadable"   # number: the PID
    NOT_REGULAR_FILE = "not-regular-file"
    NOT_ELF = "not-elf"
    UNSUPPORTED_ELF = "unsupported-elf"
    NOT_CORE = "not-core"
    NO_SUCH_PROCESS = "no-such-process"   # number: the PID
    NOT_CODE_OBJECT = "not-code-object"
    NOT_FOUND = "not-found"
    UNSUPPORTED = "unsupported"


class CommandFailure:
    """Why a pyhang command in gdb could not run, as its asker reads it: the `failure` of a
    serve-facts error reply, the `pyhang-failure:` line a command run for the command line writes
    before its one line (pyhang_gdb.commands.base).  The command line decides on these, never on
    the words (pyhang.gdb_batch)."""
    NO_TARGET = "no-target"       # gdb has no process or core loaded: it could not attach or open it
    EXITED = "exited"             # the process gdb holds has exited
    NO_THREAD = "no-thread"       # no thread is selected, or the selected one is gone
    READER = "reader"             # the target could not be read (a ReaderError: ReaderFailure)
    ARGUMENTS = "arguments"       # the command's arguments
    GDB = "gdb"                   # gdb's own error
    OTHER = "other"


class PyLockFound:
    """How the Python lock a thread waits on was found (the native PyLockFound name table)."""
    NONE = "none"
    IN_SEMAPHORE = "in-semaphore"     # the futex slept on is in the lock's sem_t
    PARKED_WAITER = "parked-waiter"   # the futex is a parking-lot waiter's, for the lock's PyMutex (3.13+)
    NO_FUTEX = "no-futex"             # no futex known: the innermost lock object on the stack


class StateWarning:
    """What about the interpreter's state could not be read or trusted (the native StateProblem name table:
    the kind of a model.warning_facts.StateIssue, python_state().warnings[i].kind).  Worded by
    render.interpreter."""
    NO_LAYOUT_TABLE = "no-layout-table"
    DEBUG_OFFSETS_ONLY = "debug-offsets-only"
    RUNTIME_UNREADABLE = "runtime-unreadable"
    TOO_MANY_INTERPRETERS = "too-many-interpreters"
    INTERPRETERS_LOOP = "interpreters-loop"
    INTERPRETER_UNREADABLE = "interpreter-unreadable"
    INTERPRETER_ID_ODD = "interpreter-id-odd"
    MAIN_NOT_LISTED = "main-not-listed"
    MAIN_ID_NOT_ZERO = "main-id-not-zero"
    TOO_MANY_THREADS = "too-many-threads"
    THREADS_LOOP = "threads-loop"
    THREAD_STATE_UNREADABLE = "thread-state-unreadable"
    THREAD_OF_OTHER_INTERPRETER = "thread-of-other-interpreter"
    THREAD_PREV_MISMATCH = "thread-prev-mismatch"
    CURRENT_NOT_LISTED = "current-not-listed"
    GIL_UNREADABLE = "gil-unreadable"
    GIL_LOCKED_ODD = "gil-locked-odd"
    GIL_HOLDER_ODD = "gil-holder-odd"
    NO_GIL_RELOCATIONS = "no-gil-relocations"
    GIL_STATICS_UNDECODED = "gil-statics-undecoded"
    INTERP_HEAD_UNDECODED = "interp-head-undecoded"
    VERSION_NOT_FOUND = "version-not-found"
    PATCH_NOT_FOUND = "patch-not-found"
    GIL_HOLDER_DISAGREES = "gil-holder-disagrees"
    DEBUG_OFFSETS_UNREADABLE = "debug-offsets-unreadable"
    DEBUG_OFFSETS_NO_COOKIE = "debug-offsets-no-cookie"
    DEBUG_OFFSETS_VERSION = "debug-offsets-version"
    DEBUG_OFFSETS_IMPLAUSIBLE = "debug-offsets-implausible"
    NO_RUNTIME = "no-runtime"
    FREE_THREADED = "free-threaded"
    DEBUG_OFFSETS_DIFFER = "debug-offsets-differ"
    ASYNCIO_DEBUG_UNREADABLE = "asyncio-debug-unreadable"     # text3 (a struct) at address; text: the row's version
    ASYNCIO_DEBUG_IMPLAUSIBLE = "asyncio-debug-implausible"   # text3's text2 = number (-1: unreadable), count bytes
    ASYNCIO_DEBUG_DIFFER = "asyncio-debug-differ"             # text3 differs from the row in changes


class LayoutBasis:
    """How the layout table an interpreter was read with relates to its release (the native LayoutBasis name
    table; PythonState.layout_basis)."""
    GENERATED = "generated"                  # generated from this release's headers
    STAND_IN = "stand-in"                    # a newer minor: its _Py_DebugOffsets, the table standing in
    PROBED_IDENTICAL = "probed-identical"    # another patch level, headers probed identical
    NOT_PROBED = "not-probed"                # another patch level, not probed: run-time checks only


class ReadPart:
    """One step on the way to what a CPython object or frame reader could not read (the native ReadPart
    name table: a problem's path[i]["part"]).  Worded by render.unread."""
    FRAME = "frame"
    CFRAME = "cframe"
    CODE_OBJECT = "code-object"
    FIELD = "field"
    STR = "str"
    BYTES = "bytes"
    INT = "int"
    FLOAT = "float"
    OBJECT = "object"
    TYPE = "type"
    DICT = "dict"
    DICT_KEYS = "dict-keys"
    DICT_ENTRIES = "dict-entries"
    LIST = "list"
    TUPLE = "tuple"
    SEQUENCE = "sequence"
    SET = "set"
    ITEMS = "items"
    INSTANCE_DICT = "instance-dict"
    MANAGED_DICT = "managed-dict"
    CELL = "cell"
    VARIABLE = "variable"
    LOCK = "lock"
    RLOCK = "rlock"
    BUFFERED_IO = "buffered-io"
    EXCEPTION_ARGS = "exception-args"
    COROUTINE = "coroutine"
    TASK = "task"
    THREAD_TASK_LIST = "thread-task-list"
    INTERPRETER_TASK_LIST = "interpreter-task-list"
    TASK_NODE = "task-node"
    TASK_REGISTRY = "task-registry"
    ASYNCIO_MODULE_STATE = "asyncio-module-state"
    EVENT_LOOP = "event-loop"
    MODULE = "module"
    ATTRIBUTE = "attribute"
    SYS_MODULES = "sys-modules"
    CONDITION = "condition"
    THREAD = "thread"
    THREAD_STATE = "thread-state"
    INTERPRETER = "interpreter"
    FUNCTION = "function"
    MUTEX = "mutex"
    CONDITION_VARIABLE = "condition-variable"
    GIL_OBJECT = "gil-object"


class ReadWhy:
    """Why a CPython object or frame reader could not read the last step of a problem's path (the native
    ReadWhy name table: a problem's "why").  Worded by render.unread."""
    UNREADABLE = "unreadable"
    PARTLY_UNREADABLE = "partly-unreadable"
    IMPLAUSIBLE = "implausible"
    INVALID = "invalid"
    INCONSISTENT = "inconsistent"
    NOT_READY = "not-ready"
    NOT_A = "not-a"
    NO_KEY = "no-key"
    NOT_IMPORTED = "not-imported"
    NO_LAYOUT = "no-layout"
    NO_LENGTH = "no-length"
    NO_INSTANCE_DICT = "no-instance-dict"
    TOO_MANY_DIGITS = "too-many-digits"
    TOO_LARGE = "too-large"
    WIDE_DIGIT = "wide-digit"
    UNSUPPORTED = "unsupported"
    READ_LIMIT = "read-limit"
    LOOPS = "loops"
    STOPPED_AFTER = "stopped-after"
    NO_FRAME = "no-frame"
    NO_PYTHON_STATE = "no-python-state"
    NOT_FOUND = "not-found"
    OWNER_NO_THREAD = "owner-no-thread"
    AWAITS_ITSELF = "awaits-itself"
    NO_TASK_TYPE = "no-task-type"
    UNDECODABLE = "undecodable"
    NOT_WRITABLE = "not-writable"
    MUTEX_AND_CONDITION_VARIABLE = "mutex-and-condition-variable"
    OVERLAPS = "overlaps"
    AMBIGUOUS = "ambiguous"
    MORE_THAN_EXPECTED = "more-than-expected"
    NOT_COLLECTED = "not-collected"   # the analysis's own: the collector gave no answer (a replayed snapshot)


class ForkProblem:
    """What a fork fact could not be read for (the native ForkProblem name table)."""
    NONE = "none"
    UNEXPECTED_TID_DESCRIPTOR = "unexpected-tid-descriptor"
    TOO_MANY_MAPPINGS = "too-many-mappings"
    MAPPINGS_UNKNOWN = "mappings-unknown"
    NO_LIBC = "no-libc"
    NO_CXA_FINALIZE = "no-cxa-finalize"
    CXA_FINALIZE_UNDECODED = "cxa-finalize-undecoded"
    DECODED_NOT_DATA = "decoded-not-data"
    NO_EXECUTABLES = "no-executables"
    MAPS_UNREADABLE = "maps-unreadable"
    NO_STAT = "no-stat"
    READER_ERROR = "reader-error"


class LockFound:
    """How a glibc-internal lock's address was found (the native LockFound name table)."""
    SYMBOL = "symbol"                     # libc's symbol table names it
    CXA_FINALIZE_CODE = "cxa-finalize-code"   # decoded from __cxa_finalize's code: the symbol is hidden


class DeadlockKind:
    """What a deadlock's cycle is made of (deadlocks[].kind)."""
    THREADS = "threads"           # threads waiting on each other (absent from the JSON: the default)
    AWAIT = "await"               # asyncio tasks awaiting each other

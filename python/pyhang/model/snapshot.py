"""Snapshots: what was collected from one target, before any conclusion.

gdb's side (gdbext/pyhang_gdb/collect.py) fills them from what gdb knows
(threads, their numbers and names, registers, unwound pcs) and from the
native decoders (CPython state, the lock each blocked thread sleeps on,
fork facts).  The analysis (pyhang.analysis) turns one into a Report with no
gdb and no target.  What is saved as JSON is not this but the answers it was
assembled from (`pyhang snapshot FILE` in gdb: a pyhang-snapshot/2 document,
model.facts.Recording), which the analysis replays anywhere and assembles
again, which is how the analysis is tested.

What a thread sleeps on is kept as the records of pyhang.model.waits,
threading's, asyncio's and the fork facts as the records of their own
modules (model.threading_facts, .asyncio_facts, .fork_facts, .python_facts
for the decoded interpreter, .files for fd objects).
"""
from __future__ import annotations
from pyhang.model.record import field, record

from pyhang.model.asyncio_facts import AsyncioState
from pyhang.model.edge_facts import HeldConnection, PoolCheckout
from pyhang.model.files import FdObject
from pyhang.model.fork_facts import ForkFacts
from pyhang.model.python_facts import PythonState
from pyhang.model.python_values import FrameLocals
from pyhang.model.references import ObjectPath
from pyhang.model.report import NativeFrame, TargetInfo, ThreadIssue
from pyhang.model.threading_facts import ThreadingState
from pyhang.model.warning_facts import TargetIssue
from pyhang.model.waits import ApiWait, CollectiveDetail, LayoutsIssue, LockIdentification, PoolWorker, PythonLockWait, SyscallFacts


@record
class ThreadSnapshot:
    num: int                      # gdb's thread number
    tid: int                      # the LWP
    name: str | None = None
    registers: dict[str, int] = field(default_factory=dict)   # frame 0: orig_rax, rdi, rsi, rdx, fs_base
    frames: list[NativeFrame] = field(default_factory=list)   # frame 0 first, symbolized
    problem: list[ThreadIssue] | None = None   # what could not be read about it (model.report.ThreadIssue)
    unwound_by: str = "gdb"       # or "pyhang": who found registers and pcs
    lock: LockIdentification | None = None     # the native lock its futex/syscall belongs to
    python_lock: PythonLockWait | None = None  # the threading lock it sleeps on
    futex_word: int | None = None    # the value of the futex word it sleeps on, when that can be a join
    python_api: ApiWait | None = None   # the Python-level object it waits in (analysis.python_api)
    host_tid: int | None = None      # the host's TID when the target's PID namespace gives another
    syscall: SyscallFacts | None = None   # what its blocking system call points at (analysis.syscalls)
    # `report --locals`: per Python frame, innermost first, its locals and what could not be read of
    # them (FrameLocals, without the frame's namespaces); None when locals were not collected.
    python_locals: list[FrameLocals] | None = None
    # A ThreadPoolExecutor worker: its pool and the future it runs (analysis.python_api.worker_frame);
    # None for any other thread.
    pool_worker: PoolWorker | None = None
    # The connections its Python frames hold (analysis.gather): the sqlite3.Connection objects when a thread
    # of the process is in SQLite's busy handler, the PostgreSQL ones when one waits on a backend, a pool's
    # when one waits in its checkout; None when not asked.
    connections: list[HeldConnection] | None = None
    # A thread waiting in a connection pool's checkout (analysis.python_api.POOL_CHECKOUTS); None for any other
    # thread.
    pool_checkout: PoolCheckout | None = None
    # A thread whose innermost Python frame is a torch.distributed collective: what it is and the rank and
    # world size read from its frames' locals (analysis.collectives.describe); None for any other thread.
    collective: CollectiveDetail | None = None
    # A thread in a gRPC client call (analysis.grpc_calls.call_frame): {"method", "frame": {function, file,
    # line}}, the method read from the call frame's `self`; None for any other thread.
    grpc_call: dict | None = None
    # Python frames that run a signal handler (gather.add_signal_handlers): {frame index, innermost 0: the
    # signal}; None when not asked (only a thread waiting for a Lock its own outer frames hold is).
    signal_frames: dict[int, int] | None = None


@record
class ProcessSnapshot:
    target: TargetInfo
    python: PythonState | None                # the decoded interpreter (native Interpreter.state())
    threads: list[ThreadSnapshot] = field(default_factory=list)
    # what about the target could not be read or trusted (model.warning_facts)
    warnings: list[TargetIssue] = field(default_factory=list)
    lock_problem: LayoutsIssue | None = None   # why glibc's lock layouts are not known
    lock_caveat: LayoutsIssue | None = None   # why the layouts used need a caveat (a release newer than checked)
    fork_facts: ForkFacts | None = None    # native fork_facts(), when asked
    threading: ThreadingState | None = None   # threading's Thread objects (PythonLocks.threading())
    names: dict[int, ObjectPath] = field(default_factory=dict)   # object address → the variable reaching it
    native_depth: int = 8                     # native frames collected per thread
    files: dict[int, FdObject] | None = None   # fd → its object from /proc (model.files), for the fds threads wait on; None: not known (a core)
    asyncio: AsyncioState | None = None    # asyncio's tasks and loops (native asyncio_state()), when collected

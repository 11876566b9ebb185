"""Snapshots: what was collected from one target, before any conclusion.

gdb's side (gdbext/pyhang_gdb/collect.py) fills them from what gdb knows
(threads, their numbers and names, registers, unwound pcs) and from the
native decoders (CPython state, the lock each blocked thread sleeps on,
fork facts).  The analysis (pyhang.analysis) turns one into a Report with no
gdb and no target: a snapshot saved as JSON (`pyhang snapshot FILE` in gdb)
is analysed again anywhere, which is how the analysis is tested.

What a thread sleeps on is kept as the records of pyhang.model.waits,
threading's, asyncio's and the fork facts as the records of their own
modules (model.threading_facts, .asyncio_facts, .fork_facts, .python_facts
for the decoded interpreter, .files for fd objects).
"""
from __future__ import annotations
from pyhang.model.record import field, record

from pyhang.model.asyncio_facts import AsyncioState
from pyhang.model.files import FdObject
from pyhang.model.fork_facts import ForkFacts
from pyhang.model.proc_record import ProcSummary
from pyhang.model.python_facts import PythonState
from pyhang.model.python_values import FrameLocals
from pyhang.model.references import ObjectPath
from pyhang.model.report import NativeFrame, TargetInfo, thread_issues
from pyhang.model.threading_facts import ThreadingState
from pyhang.model.waits import ApiWait, CollectiveDetail, LayoutsIssue, LockIdentification, PoolWorker, PythonLockWait, SyscallFacts, \
    from_data, to_data

SNAPSHOT_SCHEMA = "pyhang-snapshot/1"


@record
class ThreadSnapshot:
    num: int                      # gdb's thread number
    tid: int                      # the LWP
    name: str | None = None
    registers: dict[str, int] = field(default_factory=dict)   # frame 0: orig_rax, rdi, rsi, rdx, fs_base
    frames: list[NativeFrame] = field(default_factory=list)   # frame 0 first, symbolized
    problem: list | str | None = None   # model.report.ThreadIssues (an older snapshot's: a sentence)
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
    # The sqlite3.Connection objects its Python frames hold, when a thread of the process is in SQLite's busy
    # handler: [{"address", "name", "frame": {function, file, line}}]; None when not asked.
    connections: list[dict] | None = None
    # A thread waiting in a connection pool's checkout (analysis.python_api.POOL_CHECKOUTS): {"pool" (the
    # pool's address), "type", "frame": {function, file, line}}; None for any other thread.
    pool_checkout: dict | None = None
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
    # what about the target could not be read or trusted: {kind: kinds.TargetWarning, ...} (older: sentences)
    warnings: list[dict | str] = field(default_factory=list)
    lock_problem: LayoutsIssue | str | None = None   # why glibc's lock layouts are not known (older: a sentence)
    lock_caveat: LayoutsIssue | None = None   # why the layouts used need a caveat (a release newer than checked)
    fork_facts: ForkFacts | None = None    # native fork_facts(), when asked
    threading: ThreadingState | None = None   # threading's Thread objects (PythonLocks.threading())
    names: dict[int, ObjectPath | str] = field(default_factory=dict)   # object address → the variable reaching it (older: its name)
    native_depth: int = 8                     # native frames collected per thread
    files: dict[int, FdObject] | None = None   # fd → its object from /proc (model.files), for the fds threads wait on; None: not known (a core)
    asyncio: AsyncioState | None = None    # asyncio's tasks and loops (native asyncio_state()), when collected


def _frame_from(d):
    return NativeFrame(pc=d["pc"], function=d.get("function"), library=d.get("library"), offset=d.get("offset", 0),
                       from_debug_file=bool(d.get("from_debug_file", False)))


def _locals_from(data):
    return None if data is None else [from_data(FrameLocals, fl) for fl in data]


def to_dict(snap: ProcessSnapshot) -> dict:
    t = snap.target
    d = _to_dict(snap, t)
    if snap.asyncio is not None:   # snapshots recorded before asyncio was read have none
        d["asyncio"] = to_data(snap.asyncio)
    return d


def _target_dict(t):
    d = {"kind": t.kind, "pid": t.pid, "core": t.core, "executable": t.executable,
         "namespace_pid": t.namespace_pid, "parent_pid": t.parent_pid}
    if t.executable_problem is not None:  # (added after the first snapshots: only when there is one)
        d["executable_problem"] = t.executable_problem
    if t.proc_record is not None:   # (likewise)
        d["proc_record"] = to_data(t.proc_record)
    return d


def _to_dict(snap, t):
    return {
        "schema": SNAPSHOT_SCHEMA,
        "target": _target_dict(t),
        "python": to_data(snap.python),
        "warnings": list(snap.warnings),
        "lock_problem": to_data(snap.lock_problem),
        **({"lock_caveat": to_data(snap.lock_caveat)} if snap.lock_caveat is not None else {}),
        "fork_facts": to_data(snap.fork_facts),
        "threading": to_data(snap.threading),
        "names": [[address, to_data(name)] for address, name in sorted(snap.names.items())],
        "native_depth": snap.native_depth,
        "files": None if snap.files is None else {str(fd): to_data(obj) for fd, obj in sorted(snap.files.items())},
        "threads": [{
            "num": th.num, "tid": th.tid, "name": th.name,
            "registers": dict(th.registers),
            "frames": [{"pc": f.pc, "function": f.function, "library": f.library, "offset": f.offset,
                        **({"from_debug_file": True} if f.from_debug_file else {})}
                       for f in th.frames],
            "problem": to_data(th.problem), "unwound_by": th.unwound_by,
            "lock": to_data(th.lock), "python_lock": to_data(th.python_lock), "futex_word": th.futex_word,
            "python_api": to_data(th.python_api), "host_tid": th.host_tid, "syscall": to_data(th.syscall),
            **({"python_locals": to_data(th.python_locals)} if th.python_locals is not None else {}),
            **({"pool_worker": to_data(th.pool_worker)} if th.pool_worker is not None else {}),
            **({"connections": th.connections} if th.connections is not None else {}),
            **({"pool_checkout": th.pool_checkout} if th.pool_checkout is not None else {}),
            **({"collective": to_data(th.collective)} if th.collective is not None else {}),
            **({"grpc_call": th.grpc_call} if th.grpc_call is not None else {}),
            **({"signal_frames": sorted(th.signal_frames.items())} if th.signal_frames is not None else {}),
        } for th in snap.threads],
    }


def from_dict(d: dict) -> ProcessSnapshot:
    if d.get("schema") != SNAPSHOT_SCHEMA:
        raise ValueError("not a %s document (schema %r)" % (SNAPSHOT_SCHEMA, d.get("schema")))
    t = d["target"]
    return ProcessSnapshot(
        target=TargetInfo(kind=t["kind"], pid=t.get("pid"), core=t.get("core"), executable=t.get("executable"),
                          namespace_pid=t.get("namespace_pid"), parent_pid=t.get("parent_pid"),
                          executable_problem=t.get("executable_problem"),
                          proc_record=from_data(ProcSummary, t.get("proc_record"))),
        python=from_data(PythonState, d.get("python") or None),
        warnings=list(d.get("warnings") or []),
        lock_problem=from_data(LayoutsIssue, d.get("lock_problem")),
        lock_caveat=from_data(LayoutsIssue, d.get("lock_caveat")),
        fork_facts=from_data(ForkFacts, d.get("fork_facts")),
        threading=from_data(ThreadingState, d.get("threading")),
        names={address: from_data(ObjectPath, name) for address, name in d.get("names") or []},
        native_depth=d.get("native_depth", 8),
        files=None if d.get("files") is None else {int(fd): from_data(FdObject, obj) for fd, obj in d["files"].items()},
        asyncio=from_data(AsyncioState, d.get("asyncio")),
        threads=[ThreadSnapshot(num=th["num"], tid=th["tid"], name=th.get("name"),
                                registers={k: int(v) for k, v in (th.get("registers") or {}).items()},
                                frames=[_frame_from(f) for f in th.get("frames") or []],
                                problem=thread_issues(th.get("problem")), unwound_by=th.get("unwound_by", "gdb"),
                                lock=from_data(LockIdentification, th.get("lock")),
                                python_lock=from_data(PythonLockWait, th.get("python_lock")),
                                futex_word=th.get("futex_word"), python_api=from_data(ApiWait, th.get("python_api")),
                                host_tid=th.get("host_tid"), syscall=from_data(SyscallFacts, th.get("syscall")),
                                python_locals=_locals_from(th.get("python_locals")), pool_worker=from_data(PoolWorker, th.get("pool_worker")),
                                connections=th.get("connections"), pool_checkout=th.get("pool_checkout"),
                                collective=from_data(CollectiveDetail, th.get("collective")),
                                grpc_call=th.get("grpc_call"),
                                signal_frames=None if th.get("signal_frames") is None else
                                {int(k): int(v) for k, v in th["signal_frames"]})
                 for th in d.get("threads") or []],
    )

"""What the analysis asks a collector (pyhang.model.facts.Facts) about a
target, thread by thread, and the ProcessSnapshot it assembles from the
answers: the threads with what each sleeps on, as far as the analysis will
look.  The rules of which facts a thread needs are here, private: a thread
waiting for the GIL needs no lock identification, a futex that may be a
Python lock is asked of the Python-lock search, a bare futex's word is read
when it may be a pthread_join, a parked system call's arguments are read
from memory when they point there.
"""
from pyhang.analysis import forks, locks, python_api, syscalls
from pyhang.analysis.python_state import PythonView, gil_state
from pyhang.model.kinds import GilState, WaitKind
from pyhang.model.report import TargetInfo
from pyhang.model.snapshot import ProcessSnapshot, ThreadSnapshot

DEFAULT_NATIVE_DEPTH = 8
LOCK_FRAME_DEPTH = 6  # lock functions sit within the top frames

# The parts of a native lock identification the analysis reads.
_LOCK_KEYS = ("kind", "address", "owners", "owner_source", "confidence", "evidence", "lock", "condvar_mutex",
              "library")


def _wants_lock(view, tid, registers, frames):
    """Whether the native lock identification can say anything of this
    thread: it is not waiting for the GIL, and sleeps in a system call or has
    frames to look at."""
    if gil_state(view, tid, registers) == GilState.WAITING:
        return False
    return syscalls.in_syscall(registers) is not None or bool(frames)


def _wants_python_lock(view, tid, registers, lock):
    """The futex address to ask the Python-lock search about, or None."""
    if view.thread(tid) is None:
        return None
    kind = (lock or {}).get("kind")
    if kind and kind not in locks.PYTHON_LOCK_LOOKALIKES:
        return None
    return syscalls.futex_address(registers)


def _wants_futex_word(lock):
    """The address whose 32-bit value tells whether a bare futex wait is a
    pthread_join (locks.joined_thread), or None."""
    if lock and lock.get("kind") == WaitKind.FUTEX and not lock.get("owners"):
        return lock.get("address")
    return None


def target_info(answer):
    return TargetInfo(kind=answer["kind"], pid=answer.get("pid"), core=answer.get("core"),
                      executable=answer.get("executable"), namespace_pid=answer.get("namespace_pid"),
                      parent_pid=answer.get("parent_pid"))


def thread_snapshot(t):
    """A ThreadSnapshot of the collector's ThreadFacts, before any lock fact."""
    return ThreadSnapshot(num=t.num, tid=t.tid, name=t.name, registers=t.registers, frames=t.frames,
                          problem=t.problem, unwound_by=t.unwound_by, host_tid=t.host_tid)


def add_lock_facts(facts, view, snap):
    """What `snap` sleeps on, as far as the analysis will look."""
    if not _wants_lock(view, snap.tid, snap.registers, snap.frames):
        return snap
    identified = facts.lock(snap.tid) or {}
    if identified.get("kind"):
        snap.lock = {k: identified.get(k) for k in _LOCK_KEYS}
    futex = _wants_python_lock(view, snap.tid, snap.registers, snap.lock)
    if futex is not None:
        wait = facts.python_lock(snap.tid, futex) or {}
        if wait.get("kind") or wait.get("join_self"):
            snap.python_lock = wait
            _add_python_api(facts, view, snap)
        elif wait.get("parking_address"):
            # no Python lock, but what a parking-lot waiter waits for (3.13+): a ThreadHandle's exit event
            snap.python_lock = {"parking_address": wait["parking_address"]}
    address = _wants_futex_word(snap.lock)
    if address is not None:
        snap.futex_word = facts.word(address)
    return snap


def _add_python_api(facts, view, snap):
    """The `self` of the Python-level API a thread waits in, and the
    attributes the analysis names it by (analysis.python_api)."""
    wanted = python_api.candidates(view, snap.tid)
    if not wanted:
        return
    selves = {f["index"]: f for f in facts.frame_selves(snap.tid) or ()}
    for index, api in wanted:
        frame = selves.get(index)
        if frame is not None and frame["self"] and python_api.type_fits(api, frame["type"]):
            break
    else:
        return
    snap.python_api = {"kind": api.kind, "self": frame["self"], "type": frame["type"],
                       "frame": {"function": frame["function"], "file": frame["file"], "line": frame["line"]},
                       "attributes": facts.attributes(frame["self"], list(api.attributes))}


def add_syscall_facts(facts, kind, snap):
    """What the blocking system call of `snap` points at in target memory,
    and, for restart_syscall on a live target, what the kernel records.
    `kind`: the target's kind ("live", "core")."""
    parked = syscalls.parked(snap.registers)
    if parked is None:
        return snap
    snap.syscall = {"memory": {label: facts.syscall_memory(reader, list(args))
                               for label, reader, args in syscalls.memory_wanted(snap.registers)}}
    clock = syscalls.clock_wanted(snap.registers)
    if clock is not None and kind != "core":
        now = facts.clock_now(clock)
        if now is not None:
            snap.syscall["clock_now_ns"] = now
    if parked[0] == syscalls.RESTART and kind != "core":
        snap.syscall["proc_syscall"] = facts.proc_syscall(snap.tid)
    return snap


def files_of(facts, kind, threads):
    """{fd: object} from /proc of the fds the threads wait on, or None when
    not known (a core records no fd table)."""
    if kind == "core":
        return None
    fds = set()
    for t in threads:
        fds.update(syscalls.fds_wanted(t.registers, (t.syscall or {}).get("memory")))
    if not fds:
        return {}
    found = facts.files(sorted(fds))
    return None if found is None else {int(fd): obj for fd, obj in found}


def object_names(facts, threads):
    """{address: path} for the objects the threads wait on that a variable
    of the program reaches (the renderer words a path: render.names.object_name)."""
    wanted = set()
    for t in threads:
        wanted.update(locks.named_objects(t.lock, t.python_lock, t.python_api))
    wanted.discard(None)
    if not wanted:
        return {}
    return {address: path for address, path in facts.object_names(sorted(wanted)) or ()}


def add_references(facts, threads):
    """Which threads reach the objects the analysis asks about
    (python_api.references_wanted): python_api["referenced_by"]."""
    wanted = {t.tid: python_api.references_wanted(t.python_api) for t in threads}
    addresses = sorted({a for a in wanted.values() if a})
    if not addresses:
        return
    refs = facts.references(addresses) or {"by_object": [], "complete": False}
    by_object = {address: tids for address, tids in refs["by_object"]}
    for t in threads:
        if wanted[t.tid]:
            t.python_api["referenced_by"] = list(by_object.get(wanted[t.tid], []))
            t.python_api["references_complete"] = refs["complete"]


def add_pool_workers(facts, view, threads):
    """The pool of each ThreadPoolExecutor worker: the `work_queue` local of
    its loop's frame (python_api.worker_frame)."""
    for t in threads:
        f = python_api.worker_frame(view, t.tid)
        if f is None:
            continue
        found = facts.frame_locals(f["frame"], f["code"]) or {}
        local = next((l for l in found.get("locals") or () if l["name"] == python_api.WORKER[2]), None)
        if local and local.get("address"):
            t.pool_worker = {"work_queue": local["address"]}


LOCAL_KEYS = ("name", "kind", "type", "repr", "address")


def add_python_locals(facts, snapshot, view):
    """Each thread's Python frames' locals (`report --locals`)."""
    for t in snapshot.threads:
        pt = view.thread(t.tid)
        if pt is None:
            continue
        t.python_locals = []
        for f in pt["frames"]:
            fl = facts.frame_locals(f["frame"], f["code"]) or {"locals": [], "problem": "not collected"}
            t.python_locals.append({"locals": [{k: v[k] for k in LOCAL_KEYS} for v in fl["locals"]],
                                    "problem": fl["problem"]})


def process(facts, depth=DEFAULT_NATIVE_DEPTH, lock_facts=True):
    """(ProcessSnapshot, PythonView) of the target `facts` answers for:
    every thread with `depth` native frames and (with `lock_facts`) the lock
    facts the analysis needs."""
    target = facts.target()
    info = target_info(target)
    state = facts.python()
    view = PythonView(state)
    threads = [thread_snapshot(t) for t in facts.threads(depth)]
    names, files = {}, None
    if lock_facts:
        for t in threads:
            add_lock_facts(facts, view, t)
            add_syscall_facts(facts, info.kind, t)
        if view.ok:
            names = object_names(facts, threads)
            add_references(facts, threads)
            add_pool_workers(facts, view, threads)
        files = files_of(facts, info.kind, threads)
    snap = ProcessSnapshot(target=info, python=state, threads=threads, warnings=list(target.get("warnings") or []),
                           lock_problem=target.get("lock_problem"), native_depth=depth,
                           threading=facts.threading() if view.ok else None, names=names, files=files,
                           asyncio=facts.asyncio() if view.ok else None)
    return snap, view


def deepen(facts, snapshot, report, tids, depth):
    """Native frames `depth` deep for the threads `tids`, in the snapshot and
    in the report (the driver-lock heuristics look below a Python callback)."""
    deeper = {t.tid: t for t in facts.threads(depth, sorted(tids))}
    reported = {t.tid: t for t in report.threads}
    for snap in snapshot.threads:
        t = deeper.get(snap.tid)
        if t is not None and not t.problem:
            snap.frames = t.frames
            reported[snap.tid].native_frames = snap.frames


def fork_facts(facts, report, threads):
    """The fork facts of the target; the large containers among module
    globals only for a fork child (analysis.forks.is_child), the one process
    they are a hazard in: finding them reads every module's globals."""
    from_native = facts.fork_facts(sorted(locks.thread_bases(threads))) or {}
    py = from_native.get("python")
    if not py or not forks.is_child(report, from_native):
        return from_native
    found = facts.fork_containers() or {"containers": [], "problems": ["not collected"]}
    return dict(from_native, python=dict(py, containers=found["containers"],
                                         problems=list(py.get("problems") or []) + list(found["problems"])))


def thread(facts, tid, depth=LOCK_FRAME_DEPTH):
    """(ThreadSnapshot with its lock and system-call facts, PythonView, files)
    of the one thread `tid`: what `lock-owner` asks."""
    target = facts.target()
    view = PythonView(facts.python())
    found = facts.threads(depth, [tid])
    if not found:
        return None, view, None
    snap = add_lock_facts(facts, view, thread_snapshot(found[0]))
    add_syscall_facts(facts, target["kind"], snap)
    return snap, view, files_of(facts, target["kind"], [snap])

"""What the analysis asks a collector (pyhang.model.facts.Facts) about a
target, thread by thread, and the ProcessSnapshot it assembles from the
answers: the threads with what each sleeps on, as far as the analysis will
look.  The rules of which facts a thread needs are here, private: a thread
waiting for the GIL needs no lock identification, a futex that may be a
Python lock is asked of the Python-lock search, a bare futex's word is read
when it may be a pthread_join, a parked system call's arguments are read
from memory when they point there.
"""
from pyhang.analysis import collectives, forks, grpc_calls, locks, python_api, syscalls
from pyhang.analysis.python_state import PythonView, gil_state
from pyhang.model.edge_facts import PSYCOPG2_CONNECTION, HeldConnection, PoolCheckout
from pyhang.model.kinds import GilState, LocalKind, WaitKind
from pyhang.model.facts import DEFAULT_NATIVE_DEPTH
from pyhang.model.files import pg_backend
from pyhang.model.fork_facts import ForkContainers, ForkFacts
from pyhang.model.python_values import FrameLocals
from pyhang.model.record import replace
from pyhang.model.references import ThreadReferences
from pyhang.model.report import TargetInfo
from pyhang.model.snapshot import ProcessSnapshot, ThreadSnapshot
from pyhang.model.unread import not_collected
from pyhang.model.waits import ApiWait, CodeLine, PoolWorker, PythonLockWait, SyscallFacts


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
    kind = lock.kind if lock is not None else None
    if kind and kind not in locks.PYTHON_LOCK_LOOKALIKES:
        return None
    return syscalls.futex_address(registers)


def _wants_futex_word(lock):
    """The address whose 32-bit value tells whether a bare futex wait is a
    pthread_join (locks.joined_thread), or None."""
    if lock is not None and lock.kind == WaitKind.FUTEX and not lock.owners:
        return lock.address
    return None


def target_info(answer):
    """The report's TargetInfo of the collector's TargetFacts."""
    return TargetInfo(kind=answer.kind, pid=answer.pid, core=answer.core, executable=answer.executable,
                      namespace_pid=answer.namespace_pid, parent_pid=answer.parent_pid,
                      executable_problem=answer.executable_problem, proc_record=answer.proc_record)


def proc_known(answer):
    """Whether what /proc says of the target (TargetFacts `answer`) can be asked: of a live process,
    and of a core that holds the record `pyhang gcore` made of /proc (pyhang.proc_record)."""
    return answer.kind != "core" or answer.proc_record is not None


def thread_snapshot(t):
    """A ThreadSnapshot of the collector's ThreadFacts, before any lock fact;
    a call resumed through restart_syscall is read as the call it resumes
    (syscalls.resumed)."""
    return ThreadSnapshot(num=t.num, tid=t.tid, name=t.name, registers=syscalls.resumed(t.registers, t.frames),
                          frames=t.frames, problem=t.problem, unwound_by=t.unwound_by, host_tid=t.host_tid)


def resume_unnamed_futex_waits(facts, snaps):
    """`snaps`, each still in restart_syscall with a futex wait's arguments
    and no frame naming its call read as that futex wait when its word still
    holds the value the wait expected (syscalls.resumed_futex): one question
    for all of them."""
    candidates = [(t, syscalls.futex_wait_candidate(t.registers)) for t in snaps]
    candidates = [(t, word) for t, word in candidates if word is not None]
    if candidates:
        for (t, _), value in zip(candidates, facts.words([w for _, w in candidates]) or []):
            t.registers = syscalls.resumed_futex(t.registers, value)
    return snaps


def add_lock_facts(facts, view, snaps):
    """What each of `snaps` sleeps on, as far as the analysis will look:
    each question asked once for every thread that needs it."""
    asked = [t for t in snaps if _wants_lock(view, t.tid, t.registers, t.frames)]
    identified = dict(facts.locks([t.tid for t in asked]) or ()) if asked else {}
    for t in asked:
        found = identified.get(t.tid)
        if found is not None and found.kind:
            t.lock = found
    waits = [(t, _wants_python_lock(view, t.tid, t.registers, t.lock)) for t in asked]
    waits = [(t, futex) for t, futex in waits if futex is not None]
    answers = facts.python_locks([[t.tid, futex] for t, futex in waits]) or [] if waits else []
    with_api = []
    for (t, _), wait in zip(waits, answers):
        if wait is None:
            continue
        if wait.is_wait():
            t.python_lock = wait
            with_api.append(t)
        elif wait.parking_address:
            # no Python lock, but what a parking-lot waiter waits for (3.13+): a ThreadHandle's exit event
            t.python_lock = PythonLockWait(parking_address=wait.parking_address)
    _add_python_apis(facts, view, with_api)
    words = [(t, _wants_futex_word(t.lock)) for t in asked]
    words = [(t, address) for t, address in words if address is not None]
    for (t, _), word in zip(words, facts.words([a for _, a in words]) or [] if words else []):
        t.futex_word = word
    return snaps


def _add_python_apis(facts, view, snaps):
    """The `self` of the Python-level API each of `snaps` waits in, and the
    attributes the analysis names it by (analysis.python_api)."""
    wanted = {t.tid: python_api.candidates(view, t.tid) for t in snaps}
    asked = [t for t in snaps if wanted[t.tid]]
    if not asked:
        return
    selves = dict(facts.frame_selves([t.tid for t in asked]) or ())
    chosen = []
    for t in asked:
        by_index = {f.index: f for f in selves.get(t.tid) or ()}
        for index, api in wanted[t.tid]:
            frame = by_index.get(index)
            if frame is not None and frame.object and python_api.type_fits(api, frame.type):
                chosen.append((t, api, frame))
                break
    if not chosen:
        return
    requests = sorted({(frame.object, api.attributes) for _, api, frame in chosen})
    attributes = dict(zip(requests, facts.attributes([[a, list(names)] for a, names in requests]) or []))
    for t, api, frame in chosen:
        t.python_api = ApiWait(kind=api.kind, object=frame.object, type=frame.type,
                               frame=CodeLine(function=frame.function, file=frame.file, line=frame.line),
                               attributes=attributes.get((frame.object, api.attributes)))


def add_syscall_facts(facts, proc, snaps):
    """What the blocking system call of each of `snaps` points at in target
    memory, and, for restart_syscall where /proc is known (`proc`:
    proc_known), what the kernel records."""
    parked = [(t, syscalls.parked(t.registers)) for t in snaps]
    parked = [(t, call) for t, call in parked if call is not None]
    wanted = [(t, label, [reader, list(args)]) for t, _ in parked
              for label, reader, args in syscalls.memory_wanted(t.registers)]
    read = facts.syscall_memory([request for _, _, request in wanted]) or [] if wanted else []
    for t, _ in parked:
        t.syscall = SyscallFacts()
    for (t, label, _), value in zip(wanted, read):
        t.syscall.memory[label] = value
    if not proc:
        return snaps
    for t, _ in parked:
        clock = syscalls.clock_wanted(t.registers)
        now = facts.clock_now(clock) if clock is not None else None
        if now is not None:
            t.syscall.clock_now_ns = now
    vforks = [t for t, call in parked if call[1] == "vfork"]
    if vforks:
        for t, made in zip(vforks, facts.thread_children([t.tid for t in vforks]) or [None] * len(vforks)):
            t.syscall.children = made
    restarted = [t for t, call in parked if call[0] == syscalls.RESTART]
    if restarted:
        for t, nr in zip(restarted, facts.proc_syscalls([t.tid for t in restarted]) or [None] * len(restarted)):
            t.syscall.proc_syscall = nr
    return snaps


def files_of(facts, proc, threads):
    """{fd: FdObject} from /proc of the fds the threads wait on, or None when
    not known (`proc` false: a core without pyhang gcore's record of /proc
    holds no fd table)."""
    if not proc:
        return None
    fds = set()
    for t in threads:
        fds.update(syscalls.fds_wanted(t.registers, t.syscall.memory if t.syscall is not None else None))
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
    (python_api.references_wanted): ApiWait.referenced_by."""
    wanted = {t.tid: python_api.references_wanted(t.python_api) for t in threads}
    addresses = sorted({a for a in wanted.values() if a})
    if not addresses:
        return
    refs = facts.references(addresses) or ThreadReferences()
    by_object = {address: tids for address, tids in refs.by_object}
    for t in threads:
        if wanted[t.tid]:
            t.python_api.referenced_by = list(by_object.get(wanted[t.tid], []))
            t.python_api.references_complete = refs.complete


def add_awaited_futures(facts, view, threads):
    """The Futures each thread waiting in concurrent.futures.as_completed or
    wait still waits for (ApiWait.futures): the members of that frame's set
    of pending ones (python_api.futures_wait_frame, .futures_local)."""
    asked = [(t, python_api.futures_wait_frame(view, t.tid)) for t in threads
             if t.python_api is not None and t.python_api.kind == WaitKind.PY_EVENT]
    asked = [(t, view.frames(t.tid)[at[0]], at[1]) for t, at in asked if at is not None]
    if not asked:
        return
    found = facts.frame_locals([[f.frame, f.code] for _, f, _ in asked]) or []
    sets = [(t, function, python_api.futures_local(fl, function)) for (t, _, function), fl in zip(asked, found)]
    sets = [(t, function, local.address) for t, function, local in sets if local is not None]
    for (t, function, _), members in zip(sets, facts.members([a for _, _, a in sets]) or [] if sets else []):
        if members is not None:
            t.python_api.futures, t.python_api.futures_by = list(members), function


def add_future_runners(facts, view, threads):
    """For each thread waiting on a concurrent.futures.Future (its
    python_api; or on several, in as_completed or wait), the worker thread
    whose running work item completes it: the `future` of the
    _WorkItem.run frame's self (python_api.WORK_ITEM), recorded in the
    worker's pool_worker.future.  Asked only when a thread waits on a
    future."""
    if not any(t.python_api is not None and (t.python_api.kind == WaitKind.PY_FUTURE or t.python_api.futures)
               for t in threads):
        return
    frames = [(t, python_api.work_item_frame(view, t.tid)) for t in threads]
    frames = [(t, at) for t, at in frames if at is not None]
    if not frames:
        return
    # The innermost frames' selves name most work items; a task deeper than they reach (its own calls, 3.14's
    # WorkerContext.run between) has its run frame's locals read.
    selves = dict(facts.frame_selves([t.tid for t, _ in frames]) or ())
    items = [(t, python_api.work_item_self(selves.get(t.tid)), at) for t, at in frames]
    deeper = [(t, at) for t, item, at in items if item is None]
    found = facts.frame_locals([[at[1].frame, at[1].code] for _, at in deeper]) or [] if deeper else []
    items = [(t, item) for t, item, _ in items if item] + \
        [(t, item) for (t, _), item in zip(deeper, map(python_api.work_item, found)) if item]
    answers = facts.attributes([[item, [python_api.WORK_ITEM[3]]] for _, item in items]) or [] if items else []
    for (t, _), found in zip(items, answers):
        value = (found or {}).get(python_api.WORK_ITEM[3])
        future = value.address if value is not None else None
        if future:
            t.pool_worker = t.pool_worker or PoolWorker()
            t.pool_worker.future = future


CONNECTION_FRAMES = 16   # innermost Python frames of a thread whose locals are looked at for connections
# Frames whose locals one search for connections reads at most, over every thread: a process of thousands of
# threads gets fewer frames a thread (never fewer than CONNECTION_FRAMES_LEAST), so the search stays bounded.
CONNECTION_FRAMES_TOTAL = 4096
CONNECTION_FRAMES_LEAST = 2


def _searched_frames(view, threads):
    """[(thread, frame)]: the innermost Python frames of each of `threads` whose locals a search for
    connections reads: CONNECTION_FRAMES each, fewer when that would pass CONNECTION_FRAMES_TOTAL in all."""
    depth = max(CONNECTION_FRAMES_LEAST, min(CONNECTION_FRAMES, CONNECTION_FRAMES_TOTAL // max(1, len(threads))))
    return [(t, f) for t in threads for f in view.frames(t.tid)[:depth]]


def add_sqlite_connections(facts, view, threads):
    """When a thread sleeps in SQLite's busy handler (locks.in_sqlite_busy),
    the sqlite3.Connection objects the other threads' innermost Python
    frames hold (ThreadSnapshot.connections): one of them holds the lock it
    waits for."""
    busy = [t for t in threads if locks.in_sqlite_busy(t.registers, t.frames)]
    if not busy:
        return
    for t, found in _frame_connections(facts, view, [t for t in threads if t not in busy],
                                       ("sqlite3.Connection",), typed=False):
        t.connections = found


def _frame_connections(facts, view, threads, types, typed=True):
    """[(thread, [HeldConnection])]: the objects of `types` (type names) the innermost Python frames of each
    of `threads` hold in their locals (each once), with their `type` too when `typed`."""
    frames = _searched_frames(view, threads)
    found = facts.frame_locals([[f.frame, f.code] for _, f in frames]) or [] if frames else []
    out = {t.tid: (t, []) for t in threads if view.thread(t.tid) is not None}
    for (t, f), fl in zip(frames, found):
        for v in fl.locals if fl is not None and t.tid in out else ():
            held = out[t.tid][1]
            if v.type in types and v.address and all(c.address != v.address for c in held):
                held.append(HeldConnection(v.address, v.name, CodeLine(f.function, f.file, f.line),
                                           type=v.type if typed else None))
    return list(out.values())


# The connection objects of PostgreSQL's client libraries, by type name.
PG_CONNECTIONS = (PSYCOPG2_CONNECTION, "psycopg.Connection")


def _add_pg_status(facts, connections):
    """Each psycopg2 connection's `status` (psycopg2.extensions.STATUS_*: 1 ready, 2 in a transaction, 5
    prepared), `closed` and `server_version`, integer members of its C type; None where not read."""
    answers = facts.attributes([[c.address, ["status", "closed", "server_version"]] for c in connections]) or [] \
        if connections else []
    for c, got in zip(connections, answers):
        for name in ("status", "closed", "server_version"):
            v = (got or {}).get(name)
            setattr(c, name, v.integer if v is not None else None)


# Where a psycopg2 connection's PGconn is found, and its backend's PID in it.  psycopg2's connectionObject
# keeps `PGconn *pgconn` right after `int server_version` (its connection.h, 2.x); server_version is a member
# of its type, read by name, so its offset is where its value is among the object's first words (one place
# only, or nothing is taken).  libpq's PGconn keeps the backend's PID (`be_pid`: PQbackendPID) at an offset of its own version
# (0x308 in libpq 15, 0x410 in 18): it is found as the one word of the struct's first PGCONN_WORDS that is
# the PID of one of this process's sessions with the server (their backends, from the server's process titles).
PG_OBJECT_WORDS = 64
PGCONN_WORDS = 512
_USER_SPACE_END = 1 << 47


def _pgconn_pointers(facts, connections):
    """The PGconn address of each psycopg2 connection (its `server_version`'s value found once among the
    object's first words, the pointer after it), or None, in order."""
    wanted = [(c, [c.address + 4 * i for i in range(PG_OBJECT_WORDS)]) for c in connections
              if c.server_version and c.address]
    answers = facts.words([a for _, addresses in wanted for a in addresses]) or [] if wanted else []
    at, found = 0, {}
    for c, addresses in wanted:
        words = answers[at:at + len(addresses)]
        at += len(addresses)
        hits = [i for i, w in enumerate(words) if w is not None and w == c.server_version]
        if len(hits) != 1:
            continue
        first = (4 * hits[0] + 4 + 7) // 8 * 2   # the next 8-aligned word
        if first + 1 < len(words) and words[first] is not None and words[first + 1] is not None:
            pointer = words[first] | words[first + 1] << 32
            if 0 < pointer < _USER_SPACE_END and pointer % 8 == 0:
                found[id(c)] = pointer
    return [found.get(id(c)) for c in connections]


def _add_pg_backends(facts, connections, backends):
    """Each psycopg2 connection's `backend_pid`: the one PID of `backends` (this process's PostgreSQL
    backends) its PGconn holds, or None where not read, not found, or found more than once (two
    connections claiming one backend: neither is kept)."""
    pointers = _pgconn_pointers(facts, connections) if backends and connections else [None] * len(connections)
    wanted = [(c, [p + 4 * i for i in range(PGCONN_WORDS)]) for c, p in zip(connections, pointers) if p]
    answers = facts.words([a for _, addresses in wanted for a in addresses]) or [] if wanted else []
    at, claims = 0, {}
    for c in connections:
        c.backend_pid = None
    for c, addresses in wanted:
        words = answers[at:at + len(addresses)]
        at += len(addresses)
        pids = {w for w in words if w is not None and w in backends}
        if len(pids) == 1:
            claims.setdefault(pids.pop(), []).append(c)
    for pid, claimed in claims.items():
        if len(claimed) == 1:
            claimed[0].backend_pid = pid


def pg_backends(files):
    """{pid} of the PostgreSQL backends this process has sessions with, as the fds threads wait on show them
    (the backends holding their other ends, with their servers' other sessions of this process)."""
    out = set()
    for obj in (files or {}).values():
        for h in obj.holders or ():
            if pg_backend(h.title) is not None:
                out.add(h.pid)
                out.update(x.pid for x in h.sessions or ())
    return out


def waits_on_pg_backend(files):
    """Whether one of the fds threads wait on (`files`: files_of) is a socket whose other end a PostgreSQL
    backend holds (its title: procfs.pg_backend)."""
    return any(pg_backend(h.title) is not None for obj in (files or {}).values() for h in obj.holders or ())


def add_database_facts(facts, view, threads, files):
    """When a thread waits on a PostgreSQL backend: the PostgreSQL connections each thread's innermost Python
    frames hold (ThreadSnapshot.connections, with their `type`), and, for the threads that hold one and wait on
    a threading.Event or Condition, the threads that reach that object (ApiWait.referenced_by: a likely
    setter), for the database cycle (analysis.deadlocks.database_holders)."""
    if not waits_on_pg_backend(files):
        return
    holding = []
    for t, found in _frame_connections(facts, view, threads, PG_CONNECTIONS):
        if found:
            t.connections = (t.connections or []) + found
            holding.append(t)
    psycopg2 = [c for t in holding for c in t.connections if c.type == PSYCOPG2_CONNECTION]
    _add_pg_status(facts, psycopg2)
    _add_pg_backends(facts, psycopg2, pg_backends(files))
    waits = {t.tid: t.python_api.object for t in holding if t.python_api is not None and
             python_api.api_of(t.python_api) is not None and
             python_api.api_of(t.python_api).kind in (WaitKind.PY_EVENT, WaitKind.PY_CONDITION)}
    if not waits:
        return
    refs = facts.references(sorted(set(waits.values()))) or ThreadReferences()
    by_object = {address: tids for address, tids in refs.by_object}
    for t in holding:
        if t.tid in waits:
            t.python_api.referenced_by = list(by_object.get(waits[t.tid], []))
            t.python_api.references_complete = refs.complete


def add_pool_checkouts(facts, view, threads):
    """For the threads waiting in a connection pool's checkout (python_api.checkout_frame), the pool
    (ThreadSnapshot.pool_checkout: the checkout frame's `self`); and the pool connections the other threads'
    innermost frames hold (ThreadSnapshot.connections, with `pool`: the pool they lead to through
    python_api.POOL_HOLDINGS' attributes)."""
    waiting = [(t, python_api.checkout_frame(view, t.tid)) for t in threads]
    waiting = [(t, c) for t, c in waiting if c is not None]
    if not waiting:
        return
    selves = dict(facts.frame_selves([t.tid for t, _ in waiting]) or ())
    pools = set()
    for t, (index, function, file, types) in waiting:
        own = next((f for f in selves.get(t.tid) or () if f.index == index), None)
        if own is not None and own.object and (not types or (own.type or "").rsplit(".", 1)[-1] in types):
            t.pool_checkout = PoolCheckout(own.object, own.type, CodeLine(own.function, own.file, own.line))
            pools.add(own.object)
    if not pools:
        return
    others = [t for t in threads if t.pool_checkout is None]
    for t, held in _frame_connections(facts, view, others, tuple(python_api.POOL_HOLDINGS)):
        for c in held:
            c.pool = _follow(facts, c.address, python_api.POOL_HOLDINGS[c.type])
        found = [c for c in held if c.pool in pools]
        if found:
            t.connections = (t.connections or []) + found
    for t, found in _frame_pool_connections(facts, view, others, pools):
        held = [c for c in found if all(c.address != h.address for h in t.connections or ())]
        if held:
            t.connections = (t.connections or []) + held


def _frame_pool_connections(facts, view, threads, pools):
    """[(thread, [HeldConnection])]: the pools' connections the innermost Python frames of each of `threads`
    hold where the frame names the pool itself (python_api.frame_pool_holdings), with the pool."""
    frames = _searched_frames(view, threads)
    found = facts.frame_locals([[f.frame, f.code] for _, f in frames]) or [] if frames else []
    out = {}
    for (t, f), fl in zip(frames, found):
        for v, pool in python_api.frame_pool_holdings(fl.locals if fl is not None else [], pools):
            held = out.setdefault(t.tid, (t, []))[1]
            if all(c.address != v.address for c in held):
                held.append(HeldConnection(v.address, v.name, CodeLine(f.function, f.file, f.line), type=v.type,
                                           pool=pool))
    return list(out.values())


def _follow(facts, address, names):
    """The address the chain of attributes `names` leads to from the object at `address`, or None."""
    for name in names:
        (got,) = facts.attributes([[address, [name]]]) or [None]
        value = (got or {}).get(name)
        address = value.address if value is not None else None
        if not address:
            return None
    return address


def add_pool_workers(facts, view, threads):
    """The pool of each ThreadPoolExecutor worker: the `work_queue` local of
    its loop's frame (python_api.worker_frame)."""
    workers = [(t, python_api.worker_frame(view, t.tid)) for t in threads]
    workers = [(t, f) for t, f in workers if f is not None]
    if not workers:
        return
    for (t, _), found in zip(workers, facts.frame_locals([[f.frame, f.code] for _, f in workers]) or []):
        local = next((l for l in found.locals if l.name == python_api.WORKER[2]), None) if found is not None else None
        if local is not None and local.address:
            t.pool_worker = PoolWorker(work_queue=local.address)


SIGNAL_FRAMES = 8     # innermost Python frames looked at for a signal handler
_SIGNALS = range(1, 65)   # Linux's signal numbers, real-time ones included


def signal_handler(found):
    """The signal a frame's handler runs for, from its locals (FrameLocals), or None: a signal
    handler's two arguments are the signal's number and the frame it interrupted."""
    args = [v for v in found.locals if v.kind == LocalKind.ARGUMENT][:2] if found is not None else []
    if len(args) < 2 or args[0].type != "int" or args[1].type != "frame":
        return None
    try:
        number = int(args[0].repr)
    except (TypeError, ValueError):
        return None
    return number if number in _SIGNALS else None


def add_signal_handlers(facts, view, threads):
    """Which of the innermost Python frames run a signal handler, of each thread that waits for a
    threading.Lock an outer frame of its own references (a self-wait: the handler is often why)."""
    asked = [(t, k, f) for t in threads if t.python_lock is not None and t.python_lock.self_frames
             for k, f in enumerate(view.frames(t.tid)[:SIGNAL_FRAMES])]
    if not asked:
        return
    found = facts.frame_locals([[f.frame, f.code] for _, _, f in asked]) or []
    for t, _, _ in asked:
        t.signal_frames = {}
    for (t, k, _), fl in zip(asked, found):
        number = signal_handler(fl)
        if number is not None:
            t.signal_frames[k] = number


def add_python_locals(facts, snapshot, view):
    """Each thread's Python frames' locals (`report --locals`)."""
    frames = [(t, f) for t in snapshot.threads for f in view.frames(t.tid)]
    found = facts.frame_locals([[f.frame, f.code] for _, f in frames]) or [] if frames else []
    for t in snapshot.threads:
        if view.thread(t.tid) is not None:
            t.python_locals = []
    for (t, _), fl in zip(frames, found):
        t.python_locals.append(FrameLocals(locals=fl.locals, problem=fl.problem) if fl is not None else
                               FrameLocals(problem=not_collected()))


def process(facts, depth=DEFAULT_NATIVE_DEPTH, lock_facts=True):
    """(ProcessSnapshot, PythonView) of the target `facts` answers for:
    every thread with `depth` native frames and (with `lock_facts`) the lock
    facts the analysis needs."""
    target = facts.target()
    info = target_info(target)
    state = facts.python()
    view = PythonView(state)
    threads = resume_unnamed_futex_waits(facts, [thread_snapshot(t) for t in facts.threads(depth)])
    names, files = {}, None
    if lock_facts:
        add_lock_facts(facts, view, threads)
        add_syscall_facts(facts, proc_known(target), threads)
        if view.ok:
            names = object_names(facts, threads)
            add_references(facts, threads)
            add_pool_workers(facts, view, threads)
            add_awaited_futures(facts, view, threads)
            add_future_runners(facts, view, threads)
            add_sqlite_connections(facts, view, threads)
            add_signal_handlers(facts, view, threads)
            add_pool_checkouts(facts, view, threads)
            collectives.add_collectives(facts, view, threads)
            grpc_calls.add_calls(facts, view, threads)
        files = files_of(facts, proc_known(target), threads)
        if view.ok:
            grpc_calls.add_sockets(facts, threads, files)
            add_database_facts(facts, view, threads, files)
    snap = ProcessSnapshot(target=info, python=state, threads=threads, warnings=list(target.warnings),
                           lock_problem=target.lock_problem, lock_caveat=target.lock_caveat, native_depth=depth,
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
    from_native = facts.fork_facts(sorted(locks.thread_bases(threads))) or ForkFacts()
    py = from_native.python
    if py is None or not forks.is_child(report, from_native):
        return from_native
    found = facts.fork_containers() or ForkContainers(problems=[not_collected()])
    return replace(from_native, python=replace(py, containers=found.containers,
                                               problems=list(py.problems) + list(found.problems)))


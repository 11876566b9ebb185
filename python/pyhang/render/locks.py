"""The sentences that say what a thread waits on and who holds it: the
`blocked:` line of the report, its JSON `detail`, and `lock-owner`."""
from pyhang.libraries import basename
from pyhang.model.kinds import Confidence, ExitPath, JoinEvidence, OwnerSource, PyLockFound, QueueType, WaitKind
from pyhang.model.edge_facts import connections_of
from pyhang.model.waits import ApiDetail, CodeLine, CollectiveDetail, GrpcCallDetail, JoinDetail, PythonLockDetail, PythonLockEvidence, syscall_of
from pyhang.render import syscalls
from pyhang.render.glibc import evidence_text, layouts_text
from pyhang.render.names import lock_text, object_name, thread_issues_text

_API_KINDS = (WaitKind.PY_QUEUE_GET, WaitKind.PY_QUEUE_PUT, WaitKind.PY_QUEUE_JOIN, WaitKind.PY_SEMAPHORE, WaitKind.PY_EVENT,
              WaitKind.PY_BARRIER, WaitKind.PY_FUTURE, WaitKind.PY_IMPORT_LOCK)

# The verb of each kind, as in "Thread 1 (LWP 885) waits to write-lock rwlock 0x…".
VERBS = {
    WaitKind.MUTEX: "waits to lock mutex",
    WaitKind.RWLOCK_READ: "waits to read-lock rwlock",
    WaitKind.RWLOCK_WRITE: "waits to write-lock rwlock",
    WaitKind.RWLOCK: "waits to lock rwlock",
    WaitKind.SEMAPHORE: "waits on semaphore",
    WaitKind.CONDVAR: "waits on condition variable",
    WaitKind.FUTEX: "waits on futex word",
    WaitKind.GLIBC_INTERNAL: "waits for glibc-internal lock",
    WaitKind.THREAD_JOIN: "waits to join a thread",
    WaitKind.GIL: "waits for the GIL",
    WaitKind.PY_LOCK: "waits to acquire threading.Lock",
    WaitKind.PY_RLOCK: "waits to acquire threading.RLock",
    WaitKind.PY_CONDITION: "waits in threading.Condition.wait on Condition",
    WaitKind.PY_JOIN: "waits in Thread.join for Thread",
}


_NO_PYTHON_LOCK = PythonLockDetail()
_NO_API = ApiDetail()
_NO_JOIN = JoinDetail()
_NO_COLLECTIVE = CollectiveDetail()
_NO_GRPC = GrpcCallDetail()


def owner_text(b, names):
    """The part after the colon: who holds it, or why nobody can be named."""
    py = b.python or _NO_PYTHON_LOCK
    k = b.kind
    if k == WaitKind.GIL:
        return "held by %s" % names(b.owners[0]) if b.owners else "its holder is not known"
    glibc = b.glibc
    if k == WaitKind.SEMAPHORE:
        value = glibc.value if glibc is not None else None
        return "value %s: a semaphore has no owner" % (value if value is not None else "?")
    if k == WaitKind.CONDVAR:
        m = b.condvar_mutex
        return ("it must then reacquire mutex 0x%x" % m) if m else \
            "a condition variable has no owner (glibc does not record its mutex)"
    if k == WaitKind.FUTEX:
        return "no lock layout matches this word; its owner is not recorded"
    if k == WaitKind.PY_LOCK:
        text = "threading.Lock does not record its owner"
        suspects = py.suspects
        if suspects:
            text += "; %s also reference%s it on the stack" % (
                ", ".join(names(t) for t in suspects), "s" if len(suspects) == 1 else "")
        return text
    if (k == WaitKind.PY_BUFFERED_IO or (k == WaitKind.PY_RLOCK and py.owner_ident)) and not b.owners:
        ident = py.owner_ident
        if ident:
            return ("held by pthread_t 0x%x, which is no thread of this process (the lock was inherited across "
                    "fork, or its holder exited)" % ident)
        return "no thread is recorded as its holder"
    if k == WaitKind.PY_CONDITION:
        text = "waits to be notified"
        if py.condition_lock:
            text += ", then reacquires its %s 0x%x" % (
                {"_thread.RLock": "RLock", "_thread.lock": "Lock"}.get(py.condition_lock_type, "lock"),
                py.condition_lock)
            if py.condition_lock_owner:
                text += " (now held by %s)" % names(py.condition_lock_owner)
        return text
    if not b.owners:
        if k.startswith("rwlock") and glibc is not None and glibc.readers:
            n = glibc.readers
            return "read-held by %d thread%s (glibc does not record which)" % (n, "" if n == 1 else "s")
        return "its owner is not recorded"
    if k == WaitKind.THREAD_JOIN:
        return "until %s exits" % names(b.owners[0])
    held = "write-held" if k.startswith("rwlock") else "held"
    who = []
    for tid in b.owners:
        if names.alive(tid):
            who.append(names(tid))
        else:
            who.append("LWP %d, which is not a thread of this process (it exited, or the lock was "
                       "inherited across fork)" % tid)
    text = "%s by %s" % (held, ", ".join(who))
    count = glibc.recursion if glibc is not None else py.recursion
    if count and count > 1:
        text += " (locked %d times)" % count
    return text


def _joined(b, names):
    """"Thread 2 (LWP 6683) "worker"": the thread a Thread.join waits for."""
    name = b.join.name if b.join is not None else None
    who = names(b.owners[0]) if b.owners else "a thread that has not started"
    return who + (' "%s"' % name if name else "")


# The module each Python-level API's class lives in, to name its type.
_API_MODULES = {WaitKind.PY_QUEUE_GET: "queue", WaitKind.PY_QUEUE_PUT: "queue", WaitKind.PY_QUEUE_JOIN: "queue",
                WaitKind.PY_SEMAPHORE: "threading",
                WaitKind.PY_EVENT: "threading", WaitKind.PY_BARRIER: "threading",
                WaitKind.PY_FUTURE: "concurrent.futures"}


def python_object(kind, api):
    """"queue.Queue": the Python-level class of what a thread waits in (`api`: its ApiDetail)."""
    return "%s.%s" % (_API_MODULES.get(kind, "?"), api.type or "?")


def _queue_state(api):
    values = api.values
    if api.type == QueueType.SIMPLE:
        return "a SimpleQueue's get waits only while it is empty (unbounded, called from %s)" % _frame_text(api.frame)
    n, maxsize = values.get("queue_length"), values.get("maxsize")
    bound = "maxsize unbounded" if not maxsize or maxsize <= 0 else "maxsize %d" % maxsize
    if n is None:
        return "length unknown (%s)" % bound
    return "%s (%s)" % ("empty" if n == 0 else "%d item%s" % (n, "" if n == 1 else "s"), bound)


_FUTURES_SHOWN = 4   # Futures named in one line


def _futures_text(futures):
    """"2 Futures (0x…, 0x…)": the Futures an as_completed or wait waits for."""
    shown = ", ".join("0x%x" % f for f in futures[:_FUTURES_SHOWN]) + (", …" if len(futures) > _FUTURES_SHOWN else "")
    return "%d Future%s" % (len(futures), "" if len(futures) == 1 else "s") + (" (%s)" % shown if futures else "")


def _frame_text(frame):
    """"_handle_tasks (pool.py line 513)": the Python frame (a CodeLine) a wait was found on."""
    if frame is None:
        return "?"
    return "%s (%s line %s)" % (frame.function, basename(frame.file), frame.line)


def _api_summary(b, names):
    """The line of a wait inside a Python-level API (analysis.python_api)."""
    api = b.api or _NO_API
    values = api.values
    what = "%s 0x%x" % (python_object(b.kind, api), b.address or 0) + (" (%s)" % object_name(b.name) if b.name else "")
    k = b.kind
    if k == WaitKind.PY_QUEUE_GET:
        return "waits to get from %s: %s" % (what, _queue_state(api))
    if k == WaitKind.PY_QUEUE_PUT:
        return "waits to put to %s: %s" % (what, _queue_state(api))
    if k == WaitKind.PY_QUEUE_JOIN:
        n = values.get("unfinished_tasks")
        return "waits in Queue.join of %s until task_done() was called for every item: %s unfinished, %s" % (
            what, "?" if n is None else n, _queue_state(api))
    if k == WaitKind.PY_SEMAPHORE:
        initial = values.get("_initial_value")
        return "waits to acquire %s: value %s%s: a semaphore has no owner" % (
            what, "?" if values.get("_value") is None else values["_value"],
            " of %d" % initial if initial is not None else "")
    if k == WaitKind.PY_EVENT:
        line = "waits for %s to be set: %s" % (what, "it is set" if values.get("_flag") else "nobody has set it")
        if api.futures is not None:
            line += "; concurrent.futures.%s waits on it for %s" % (api.futures_by, _futures_text(api.futures))
            if b.owners and b.owner_source == OwnerSource.WORK_ITEM:
                who = [names(tid) for tid in b.owners]
                line += ", whose work items %s run%s" % (
                    ", ".join(who[:-1]) + " and " + who[-1] if len(who) > 1 else who[0], "s" if len(who) == 1 else "")
            else:
                line += ", which no thread is running"
        return line
    if k == WaitKind.PY_BARRIER:
        return "waits at %s: %s of %s parties are waiting" % (
            what, "?" if values.get("_count") is None else values["_count"],
            "?" if values.get("_parties") is None else values["_parties"])
    if k == WaitKind.PY_FUTURE:
        line = "waits for the result of %s: it is %s" % (what, values.get("_state") or "in an unknown state")
        loop = api.asyncio
        if loop and b.owners:
            by = "asyncio task '%s'" % loop["task"] if loop.get("task") else \
                "an asyncio callback still waiting in the ready queue"
            line += "; %s completes it, on the event loop run by %s" % (by, names(b.owners[0]))
        elif b.owners and b.owner_source == OwnerSource.WORK_ITEM:
            line += "; %s runs the work item that completes it" % names(b.owners[0])
        return line
    if k == WaitKind.PY_IMPORT_LOCK:
        module = values.get("name") or "?"
        held = "held by %s" % names(b.owners[0]) if b.owners else "its owner is not known"
        return "waits for the import lock of module %r: %s" % (module, held)
    return "waits in %s" % what


# How a join is part of its process's exit (model.kinds.ExitPath), after "waits in Thread.join for X to exit".
_EXIT_PATHS = {ExitPath.QUEUE_FEEDER: ", as this process exits: multiprocessing's exit finalizers join a Queue's "
                                      "feeder thread, which must first write everything put to the queue into its "
                                      "pipe (the reader must read it)",
               ExitPath.FINALIZERS: ", as this process exits (multiprocessing's exit finalizers)"}


def buffered_object(lock):
    """"<_io.BufferedWriter name='<stdout>'>": a buffered I/O object (its PythonLockDetail) as Python's repr()
    names it."""
    stream = lock.stream
    return "<%s%s>" % (lock.type or "_io.Buffered", " name=%s" % stream if stream else "")


def _buffered_summary(b, names):
    """"waits for the internal lock of <_io.BufferedWriter name='<stdout>'> 0x… (sys.stdout): held by …"."""
    lock = b.python or _NO_PYTHON_LOCK
    where = " 0x%x" % (b.address or 0)
    named = object_name(b.name) or lock.found_in
    if named:
        where += " (%s)" % named
    line = "waits for the internal lock of %s%s: %s" % (buffered_object(lock), where, owner_text(b, names))
    if b.confidence and b.confidence != Confidence.CERTAIN:
        line += " [%s]" % b.confidence
    return line


def rank_text(rank, size):
    """"rank 1 of 3", "rank 1", "of 3 ranks", or "" (what was read of a collective wait's rank and world size)."""
    if rank is not None:
        return "rank %d" % rank + (" of %d" % size if size is not None else "")
    return "of %d ranks" % size if size is not None else ""


def _connection_text(c):
    """"127.0.0.1:50051 (fd 5), whose other end PID 7 (python3 server.py) holds"."""
    where = "%s (fd %d)" % (c.get("peer") or c.get("link") or "?", c["fd"])
    peers = [p for p in c.get("peers") or ()]
    if peers:
        held = ", ".join("PID %d (%s)" % (p["pid"], p.get("title") or p.get("comm")) if p.get("title") or
                         p.get("comm") else "PID %d" % p["pid"] for p in peers)
        return "%s, whose other end %s hold%s" % (where, held, "s" if len(peers) == 1 else "")
    if c.get("pids") == []:
        return "%s, whose other end no process of this machine holds" % where
    return "%s, whose other end could not be found" % where


def grpc_call_summary(d, confidence=None):
    """"waits in a gRPC call with no deadline for its server's answer, on the channel's connection to
    127.0.0.1:50051 (fd 5), whose other end PID 7 (...) holds [likely]"."""
    call = "waits in a gRPC call with no deadline for its server's answer"
    if d.sockets:
        where = "; ".join(_connection_text(c) for c in d.sockets[:_LISTED_CONNECTIONS])
        more = " and %d more" % (len(d.sockets) - _LISTED_CONNECTIONS) if len(d.sockets) > _LISTED_CONNECTIONS \
            else ""
        call += ", on the channel's connection%s to %s%s" % ("" if len(d.sockets) == 1 else "s", where, more)
    elif not d.fd_table:
        call += " (its connection is unknown: a core without pyhang gcore's record has no fd table)"
    else:
        call += " (gRPC's poller watches no connected socket that pyhang found)"
    return "%s [%s]" % (call, confidence or "likely")


def grpc_call_evidence(d):
    frame = d.frame or {}
    if d.native_wait == WaitKind.PY_CONDITION:
        return ("its Python frame %s (grpc/_channel.py) waits in grpc/_common.py's wait, 100 ms at a time, on its "
                "call's threading.Condition, which the channel's own thread notifies when the answer comes; the "
                "call has no deadline" % (frame.get("function") or "result"))
    return ("its Python frame %s (grpc/_channel.py) has no timeout and it %s, as gRPC's next_event does until the "
            "call's answer comes" % (frame.get("function") or "_blocking",
                                     "polls in %s" % d.native_wait if d.native_wait in _POLL_CALLS else
                                     "sleeps on a %s while another thread polls" % (d.native_wait or "futex")))


_LISTED_CONNECTIONS = 3
_POLL_CALLS = ("epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll")


def collective_summary(c, confidence=None):
    """"waits for the other ranks in all_reduce (gloo, rank 1 of 3; rank and world size from the locals of run):
    they are other processes [likely]"."""
    if c.transport:
        return ("runs a collective of its torch.distributed process group and waits in gloo's transport (%s) for "
                "the other ranks: they are other processes [%s]" % (c.transport, confidence or "likely"))
    about = [x for x in (c.backend, rank_text(c.rank, c.world_size)) if x]
    read = c.read_from or {}
    frames = sorted({f["function"] for f in read.values()})
    if frames:
        which = " and ".join(n.replace("_", " ") for n in ("rank", "world_size") if n in read)
        about.append("%s from the locals of %s" % (which, ", ".join(frames)))
    return "waits for the other ranks in torch.distributed's %s%s: they are other processes [%s]" % (
        c.function or "collective", " (%s)" % "; ".join(about) if about else "", confidence or "likely")


def summary(b, names):
    """"waits to write-lock rwlock 0x… (libcuda.so.1): write-held by Thread 8 (LWP 898)"."""
    if b.kind in _API_KINDS:
        line = _api_summary(b, names)
        if b.confidence and b.confidence != Confidence.CERTAIN:
            line += " [%s]" % b.confidence
        return line
    if b.kind == WaitKind.SYSCALL:
        line = syscalls.summary(b)
        return line + (" [%s]" % b.confidence if b.confidence and b.confidence != Confidence.CERTAIN else "")
    if b.kind == WaitKind.THREAD_JOIN and b.owners:
        return "waits in pthread_join for %s to exit" % names(b.owners[0])
    if b.kind == WaitKind.PY_BUFFERED_IO:
        return _buffered_summary(b, names)
    if b.kind == WaitKind.SQLITE_BUSY:
        return ("retries in SQLite's busy handler (%s): another connection holds a lock on the database, and it "
                "sleeps and tries again until its busy timeout [%s]" % (basename(b.library) or "libsqlite3",
                                                                       b.confidence or "likely"))
    if b.kind == WaitKind.COLLECTIVE:
        return collective_summary(b.collective or _NO_COLLECTIVE, b.confidence)
    if b.kind == WaitKind.GRPC_CALL:
        return grpc_call_summary(b.grpc or _NO_GRPC, b.confidence)
    if b.kind == WaitKind.PY_JOIN:
        join = b.join or _NO_JOIN
        mark = " [%s]" % b.confidence if b.confidence and b.confidence != Confidence.CERTAIN else ""
        if join.shutdown and len(b.owners) > 1:
            who = ", ".join(names(t) + (' "%s"' % n if n else "") for t, n in zip(b.owners, join.names))
            return "waits at interpreter exit (threading._shutdown) for the non-daemon threads %s to exit%s" % (
                who, mark)
        if join.shutdown:
            return "waits at interpreter exit (threading._shutdown) for the non-daemon %s to exit%s" % (
                _joined(b, names), mark)
        return "waits in Thread.join for %s to exit%s%s" % (_joined(b, names), _EXIT_PATHS.get(join.exiting, ""),
                                                            mark)
    verb = VERBS.get(b.kind, "waits on " + b.kind)
    where = ""
    if b.address is not None and b.kind != WaitKind.GIL:
        where = " 0x%x" % b.address
        if b.name:
            where += " (%s)" % object_name(b.name)
        if b.library:
            where += " (%s)" % (basename(b.library) if not b.symbol or b.name else
                                "%s in %s" % (b.symbol, basename(b.library)))
    line = "%s%s: %s" % (verb, where, owner_text(b, names))
    if b.confidence and b.confidence != Confidence.CERTAIN:
        line += " [%s]" % b.confidence
    return line


# How the analysis found a wait it identified itself (BlockedOn.evidence is None).
_JOIN_EVIDENCE = {
    JoinEvidence.TSTATE_LOCK: "the Thread object joined: its _tstate_lock, held until it exits",
    JoinEvidence.HANDLE: "the Thread object joined: its _handle, set when it exits",
    JoinEvidence.SHUTDOWN_HANDLE: "threading._shutdown joins every non-daemon thread (_thread._shutdown); it is "
                                  "parked on the thread_is_exiting event of this Thread's _handle",
    JoinEvidence.SHUTDOWN_ACTIVE: "threading._shutdown joins every non-daemon thread (_thread._shutdown); "
                                  "the non-daemon threads of threading._active",
}


def python_lock_evidence(ev):
    """How the Python-lock search found a lock (a PythonLockEvidence), in words."""
    f = ev.frame or CodeLine()
    if ev.found_in:
        where = "%s (no frame references it)" % ev.found_in
    else:
        where = "%sslot %s of %s (%s:%s)" % ("a bound method of it in " if ev.via_method else "", ev.slot, f.function,
                                            (f.file or "").rsplit("/", 1)[-1], f.line)
    if ev.found == PyLockFound.NO_FUTEX:
        words = "no futex address: innermost %s 0x%x on the stack, %s" % (ev.type, ev.object or 0, where)
    else:
        how = "is a parked waiter's, for the PyMutex" if ev.found == PyLockFound.PARKED_WAITER else "is in the sem_t"
        words = "futex 0x%x %s 0x%x of %s 0x%x; %s" % (ev.futex or 0, how, ev.word or 0, ev.type, ev.object or 0,
                                                      where)
    if ev.condition is not None:
        words += "; Condition.wait: waiting to be notified (self 0x%x)" % ev.condition
    return words


def evidence_words(e):
    """How a wait (or an edge) was identified, in words: the Python-lock
    search's facts, or the glibc decoders' (render.glibc)."""
    if isinstance(e, PythonLockEvidence):
        return python_lock_evidence(e)
    return evidence_text(e)


def evidence(b):
    """How the wait `b` was identified: the native side's evidence (worded by
    render.glibc, or the Python-lock search's facts in words), or, for a wait the
    analysis identified itself, these words of its kind and facts (None
    where there are neither)."""
    if b.evidence is not None:
        return evidence_words(b.evidence)
    if b.kind == WaitKind.THREAD_JOIN:
        return "sleeps on the tid word of the joined thread's struct pthread, which holds its TID"
    if b.kind == WaitKind.GIL:
        return "sleeps on a futex inside the GIL's state"
    if b.kind == WaitKind.PY_JOIN:
        return _JOIN_EVIDENCE.get((b.join or _NO_JOIN).joined_by)
    api = b.api or _NO_API
    if b.kind in _API_KINDS and api.api_file:
        return "self of %s (%s)" % (api.frame.function if api.frame else None, api.api_file.strip("/>"))
    if b.kind == WaitKind.GRPC_CALL:
        return grpc_call_evidence(b.grpc or _NO_GRPC)
    s = syscall_of(b)
    if s.number is not None:
        return "orig_rax %d (%s) and its argument registers" % (s.number, s.name)
    c = b.collective or _NO_COLLECTIVE
    if b.kind == WaitKind.COLLECTIVE and c.transport:
        return "its first frame outside glibc is gloo's %s, which waits for a peer rank's data (or for the peer " \
               "to take its own), and it sleeps on a %s" % (c.transport, c.native_wait or "futex")
    if b.kind == WaitKind.COLLECTIVE:
        return "its innermost Python frame is %s (torch/distributed/distributed_c10d.py) and it sleeps on a %s, as " \
               "the collective's work.wait() does" % (c.function, c.native_wait or "futex")
    return None


# `named` below: whether the line names its thread; not under gdb's
# `thread apply`, whose own header names it just before.

def describe(b, tid, names, named=True):
    """One line: "Thread 1 (LWP 885) waits to write-lock rwlock 0x… (libcuda.so.1): write-held by …"
    ("waits to write-lock …" unnamed)."""
    return "%s %s" % (names(tid), summary(b, names)) if named else summary(b, names)


def not_blocked(tid, names, syscall, lock_problem=None, named=True):
    """`lock-owner` of a thread that waits on nothing pyhang knows.
    `syscall`: the name of the system call it sleeps in (its number when it
    has none: analysis.syscalls.name), or None; `lock_problem`: why glibc's
    lock layouts are not known (a LayoutsIssue)."""
    doing = "in the %s system call" % syscalls.call_name(syscall) if syscall is not None else "running"
    line = ("%s is not blocked on a lock (%s)" % (names(tid), doing) if named
            else "not blocked on a lock (%s)" % doing)
    if lock_problem:
        line += "\n  (%s)" % layouts_text(lock_problem)
    return line


def unreadable(tid, names, problem, named=True):
    """`lock-owner` of a thread whose registers or stack could not be read (`problem`: its ThreadIssues)."""
    problem = thread_issues_text(problem)
    return ("%s: cannot tell what it waits on: %s" % (names(tid), problem) if named
            else "cannot tell what it waits on: %s" % problem)


def likely_holder_evidence(facts):
    """Why a thread is thought to hold a native lock that records no owner,
    from the facts of its heuristic edge (model.edge_facts.DriverLockFacts: analysis.waitgraph.likely_holders):
    the frame that is inside the lock's library, and how sure that makes it."""
    name = basename(facts.library)
    where = "frame #%d is in %s" % (facts.library_frame, name)
    driver = " (a driver library)" if facts.driver_library else ""
    callback = facts.callback
    if callback:
        return ("%s, which called back into Python (%s at frame #%d), and it now waits for the GIL: it entered %s "
                "and has not left, so it likely holds the lock%s" % (where, callback.function, callback.frame,
                                                                     name, driver))
    if facts.waits_for_gil:
        return "%s and it waits for the GIL: it likely holds the lock it took inside %s%s" % (where, name, driver)
    return "%s and it is blocked (%s): it may hold the lock%s" % (where, facts.blocked_kind, driver)


def database_held_text(e):
    """What the owner of a database edge (analysis.deadlocks.database_holders) holds."""
    own = e.facts.backend
    if own:
        return "holds a PostgreSQL connection whose backend, PID %d, says `%s`: an open transaction" % (
            own.pid, own.title)
    tx = e.facts.open_transactions
    return "holds a PostgreSQL connection, and this process has %s open transaction%s (%s)" % (
        "an" if len(tx) == 1 else len(tx), "" if len(tx) == 1 else "s",
        "; ".join("backend PID %d: `%s`" % (x.pid, x.title) for x in tx))


def pool_connections_text(facts):
    """The connections the owner of a pool or database edge holds, named with the frames that hold them."""
    return "; ".join("`%s` (%s in %s, %s:%s)" % (c.name, c.type, c.frame.function, c.frame.file, c.frame.line)
                     for c in connections_of(facts) or ())


def pool_held_text(e):
    """What the owner of a pool edge (analysis.deadlocks.pool_holders) holds."""
    pool = e.facts.pool
    return "holds a connection of the pool %s at 0x%x that the checkout waits for: %s" % (
        pool.type or "pool", pool.pool, pool_connections_text(e.facts))


def database_evidence(facts):
    """Why a thread is a likely holder of the lock a query waits for in PostgreSQL."""
    d = facts.database
    held = "; ".join("`%s` in %s, %s:%s" % (c.name, c.frame.function, c.frame.file, c.frame.line)
                     for c in facts.connections or ())
    own = facts.backend
    if own:
        return ("its query's backend PID %d says `%s`: it waits for a lock another session holds; the thread it waits "
                "on holds a PostgreSQL connection (%s) whose backend (PID %d, the connection's own) says `%s`%s: its "
                "open transaction likely holds that lock (the server's lock graph is not read)" % (
                    d.pid, d.title, held, own.pid, own.state,
                    ", and the connection's status says inside a transaction" if facts.status_agrees else
                    ", though the connection's status does not say inside a transaction"))
    return ("its query's backend PID %d says `%s`: it waits for a lock another session holds; the thread it waits on holds a "
            "PostgreSQL connection (%s) and this process has a session `idle in transaction`: its open "
            "transaction likely holds that lock (the server's lock graph is not read)" % (d.pid, d.title, held))


_LISTED_WAITERS = 8   # waiters named in a held-across-sleep line; the rest are counted


def held_across_sleep_text(f, names):
    """"Thread 2 (LWP 9) "holder" holds threading.Lock 0x… (__main__.LOCK) while it sleeps, for another 3596 s,
    in sleep_forever (app.py line 44); Thread 3 (LWP 10) waits for it [likely: …]" (a held-across-sleep
    verdict's facts: analysis.held)."""
    locks = " and ".join(lock_text(x.kind, x.address) + (" (%s)" % object_name(x.name) if x.name else "")
                         for x in f.locks)
    likely = any(x.source == OwnerSource.HEURISTIC for x in f.locks)
    how = "for another %s" % syscalls.duration(f.left_ns) if f.left_ns is not None else \
        "in a sleep of %s" % syscalls.duration(f.requested_ns)
    frame = f.frame
    where = " in %s (%s line %s)" % (frame.function or "?", basename(frame.file) or "?", frame.line) if frame else ""
    waiters = f.waiters
    text = "%s %s %s while it sleeps (%s) %s%s; %s wait%s for it" % (
        names(f.holder), "most likely holds" if likely else "holds", locks, f.call, how, where,
        ", ".join(names(t) for t in waiters[:_LISTED_WAITERS]) +
        (", and %d more" % (len(waiters) - _LISTED_WAITERS) if len(waiters) > _LISTED_WAITERS else ""),
        "s" if len(waiters) == 1 else "")
    behind = f.behind or []
    if behind:
        text += ", and %d more thread%s wait%s on them" % (len(behind), "" if len(behind) == 1 else "s",
                                                          "s" if len(behind) == 1 else "")
    return text + " [%s: it may release %s when it wakes; until then none of them can run]" % (
        f.confidence or Confidence.LIKELY, "it" if len(f.locks) == 1 else "them")

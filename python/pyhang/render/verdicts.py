"""What is wrong with a process, said first: each verdict's sentence, its
title and advice, and the report's headline.  Sentences only: the analysis
(pyhang.analysis) decided every fact they word."""
from pyhang.libraries import basename
from pyhang.model.kinds import HANG_VERDICTS, Confidence, DeadlockKind, ExitStatus, HazardKind, PythonEvidence, \
    PythonStatus, ThreadState, Unread, VerdictKind, WaitKind, severity
from pyhang.model.edge_facts import DatabaseFacts, LockSelfFacts, PoolCheckoutFacts
from pyhang.model.report import Hazard
from pyhang.model.verdict_facts import IdleWait, StillRead
from pyhang.render.account import LISTED as _LISTED, count, library as _lib, pids_text as _pids_text, seconds_text, \
    unaccounted_text
from pyhang.render.asyncio import loop_blocked_text
from pyhang.render.glibc import layouts_text
from pyhang.render.locks import held_across_sleep_text
from pyhang.render.names import lock_text, object_name
from pyhang.render.process_verdicts import collective_mismatch_text, pool_task_lost_text, server_died_text, \
    waits_on_process_text
from pyhang.render.target import files_missing


def holder_blocked_text(facts, names):
    """"Thread 4 (LWP 21727) holds the GIL while blocked in the pause system call in pause (libc.so.6): …"."""
    inside = " in %s" % facts.function if facts.function else ""
    if facts.library:
        inside += " (%s)" % basename(facts.library)
    if facts.ctypes:
        c = facts.caller
        inside += ", in a C function called through ctypes%s, which keeps the GIL during the call only for a " \
                  "function of a ctypes.PyDLL library (or ctypes.pythonapi)" % (
                      ' from File "%s", line %s, in %s' % (c.file, c.line, c.function) if c else "")
    return ("%s holds the GIL while blocked in the %s system call%s: "
            "no other thread can run Python until it returns" % (names(facts.tid), facts.syscall, inside))


def nothing_can_wake_text(f, names):
    """"Thread 2 (LWP 7) waits to get from the empty queue 0x…, which …: nothing in this process can wake it
    [likely: …]"; the same of a put on a full queue, and of a Queue.join nothing will finish."""
    if f.kind == WaitKind.PY_QUEUE_PUT:
        return _queue_wait_text(f, names, "to put to the full queue", "drain")
    if f.kind == WaitKind.PY_QUEUE_JOIN:
        return _queue_join_text(f, names)
    waiters = f.waiters
    who = ", ".join(names(t) for t in waiters)
    others = " (the others reaching it wait to get from it too)" if len(f.referenced_by) > 1 else ""
    partial = "" if f.complete else "; not every frame could be read"
    return ("%s wait%s to get from the empty queue 0x%x%s, which no other thread reaches from its Python "
            "frames%s: nothing in this process can wake %s [%s: a thread may still reach it through a global or "
            "from C%s]" % (
                who, "s" if len(waiters) == 1 else "", f.address or 0, " (%s)" % object_name(f.name) if f.name else "",
                others,
                "it" if len(waiters) == 1 else "them", f.confidence or "likely", partial))


def _queue_name(f):
    return "0x%x%s" % (f.address or 0, " (%s)" % object_name(f.name) if f.name else "")


def _queue_wait_text(f, names, what, verb):
    waiters = f.waiters
    partial = "" if f.complete else "; not every frame could be read"
    return ("%s wait%s %s %s, which no other thread reaches from its Python frames: nothing in this process can "
            "%s it [%s: a thread may still reach it through a global or from C%s]" % (
                ", ".join(names(t) for t in waiters), "s" if len(waiters) == 1 else "", what, _queue_name(f), verb,
                f.confidence or "likely", partial))


def _queue_join_text(f, names):
    """"Thread 1 waits in Queue.join of 0x… for 1 unfinished task, while …: nothing will call task_done()"."""
    waiters = f.waiters
    partial = "" if f.complete else "; not every frame could be read"
    n = f.unfinished or 0
    consumers = f.consumers or []
    if f.length:
        why = ("%s item%s still in the queue and no other thread reaches it: nothing will get them" %
               (f.length, "" if f.length == 1 else "s"))
    else:
        why = ("the queue is empty and every other thread that reaches it (%s) waits in its get(): an item was taken "
               "and its task_done() never called, so nothing will call it" % ", ".join(names(t) for t in consumers))
    return "%s wait%s in Queue.join of %s for %d unfinished task%s, while %s [%s: a thread may still reach it " \
        "through a global or from C%s]" % (", ".join(names(t) for t in waiters), "s" if len(waiters) == 1 else "",
                                           _queue_name(f), n, "" if n == 1 else "s", why,
                                           f.confidence or "likely", partial)


def _still_read_text(read):
    """"the native stacks of 2 threads, the system-call wait of 1 thread, ...": what an
    incomplete report still holds (an `incomplete` verdict's StillRead)."""
    parts = []
    if read.native_stacks:
        parts.append("the native stacks of %s" % count(len(read.native_stacks), "thread"))
    if read.syscall_waits:
        n = len(read.syscall_waits)
        parts.append("the system-call wait%s of %s" % ("" if n == 1 else "s", count(n, "thread")))
    if read.lock_waits:
        n = len(read.lock_waits)
        parts.append("the lock or object wait%s of %s" % ("" if n == 1 else "s", count(n, "thread")))
    if read.python_status == PythonStatus.OK:
        parts.append("the Python state")
    if read.lock_layouts:
        parts.append("glibc's lock layouts")
    if read.deadlocks:
        parts.append("the %s above" % count(read.deadlocks, "deadlock"))
    return ", ".join(parts) if parts else "nothing else"


def _python_unread_why(f):
    """Why a Python process's state could not be read, from an incomplete verdict's facts."""
    version = "CPython %s" % f.version if f.version else "this CPython (its version was not found)"
    path = basename(f.python_evidence_path) or None
    where = " in %s" % path if path else ""
    if f.status == PythonStatus.UNSUPPORTED and f.free_threaded:
        return "%s%s is a free-threaded build (Py_GIL_DISABLED), whose objects, frames and locks pyhang does not " \
               "decode" % (version, where)
    if f.status == PythonStatus.UNSUPPORTED:
        return "pyhang has no layout for %s%s" % (version, where)
    if f.status == PythonStatus.UNREADABLE:
        return "the runtime state of %s%s could not be read from the target's memory" % (version, where)
    if f.python_evidence == PythonEvidence.LIBRARY:
        return "no CPython runtime was found, yet a thread runs code in %s" % path
    if f.python_evidence == PythonEvidence.EXECUTABLE:
        return "no CPython runtime was found, yet the program is %s" % path
    return "status %s" % f.status


def incomplete_text(f, names):
    """The sentence of an `incomplete` verdict: what could not be read, what that hides, what still holds."""
    still = "; still read: " + _still_read_text(f.read or StillRead())
    if f.unread == Unread.PYTHON_STATE:
        return ("the Python state of this Python process could not be read (%s), so no "
                "thread's Python stack, GIL state, threading lock or Thread.join is known and no deadlock through "
                "them can be ruled out%s" % (_python_unread_why(f), still))
    if f.unread == Unread.LOCK_LAYOUTS:
        waits = f.waits or []
        listed = ", ".join("%s on futex 0x%x" % (names(w.tid), w.futex) for w in waits[:_LISTED])
        if len(waits) > _LISTED:
            listed += ", and %d more" % (len(waits) - _LISTED)
        return ("glibc's lock layouts are not known (%s), so who holds what %s wait%s "
                "on cannot be named and no deadlock through %s can be ruled out: %s%s" % (
                    layouts_text(f.problem) or "unknown reason", count(len(waits), "thread"),
                    "s" if len(waits) == 1 else "", "it" if len(waits) == 1 else "them", listed, still))
    return "%s could not be read%s" % (f.unread, still)


_INCOMPLETE_HEADLINE = {Unread.PYTHON_STATE: "the Python state could not be read",
                        Unread.LOCK_LAYOUTS: "glibc's lock layouts are not known"}


def incomplete_reasons(report):
    """["the Python state could not be read", ...]: what the report's `incomplete` verdicts say could not be read."""
    unread = [v.facts.unread for v in report.verdicts if v.kind == VerdictKind.INCOMPLETE]
    return [_INCOMPLETE_HEADLINE.get(u, "%s could not be read" % u) for u in dict.fromkeys(unread)]


def holder_exited_text(f, names):
    """"Thread 3 (LWP 9) waits on threading.Lock 0x… for a client of a multiprocessing manager …: no live thread
    holds it [likely: …]"."""
    what = lock_text(f.kind, f.address) + (" (%s)" % object_name(f.name) if f.name else "")
    at = (f.frame.function or "?", basename(f.frame.file) or "?", f.frame.line) if f.frame else ("?", "?", "?")
    return ("%s waits on %s for a client of a multiprocessing manager (%s, %s line %s); the server made the lock "
            "on a client's request after it started, so fork did not copy it, and no live thread references it: "
            "the server thread that took it for a client ended when that client's connection closed (the client "
            "exited or was killed) without releasing it, and no live thread holds it [%s: another client may still "
            "hold it]" % ((names(f.waiter), what) + at + (f.confidence or "likely",)))


def verdict_text(v, names):
    if v.kind == VerdictKind.INCOMPLETE:
        return incomplete_text(v.facts, names)
    if v.kind == VerdictKind.GIL_NOBODY_HOLDS:
        return "every Python thread waits for the GIL and no thread holds it"
    if v.kind == VerdictKind.GIL_HANDOVER:
        return ("the GIL is free and %s wait%s for it while other Python threads do not: the process was stopped "
                "while one thread handed the GIL to another (look again: one of them should hold it)" % (
                    ", ".join(names(t) for t in v.threads), "s" if len(v.threads) == 1 else ""))
    if v.kind == VerdictKind.GIL_HOLDER_BLOCKED:
        return holder_blocked_text(v.facts, names)
    if v.kind == VerdictKind.OWNER_GONE:
        f = v.facts
        if not f.owners:
            return ("%s waits on %s whose owner pthread_t 0x%x is no thread of this process: no live thread can "
                    "release it" % (names(f.waiter), lock_text(f.kind, f.address), f.owner_ident or 0))
        return ("%s waits on %s 0x%x whose owner LWP %s is not a thread of this process: no live thread can "
                "release it" % (names(f.waiter), f.kind, f.address or 0,
                                ", ".join(str(o) for o in f.owners)))
    if v.kind == VerdictKind.HOLDER_EXITED:
        return holder_exited_text(v.facts, names)
    if v.kind == VerdictKind.ASYNCIO_LOOP_BLOCKED:
        return loop_blocked_text(v.facts, names, lock_text)
    if v.kind == VerdictKind.WAITS_ON_PROCESS:
        return waits_on_process_text(v.facts, names)
    if v.kind == VerdictKind.POOL_IDLE:
        workers = v.facts.workers
        listed = ", ".join("%s (%s)" % (names(w.tid), _lib(w.library)) for w in workers[:_LISTED])
        if len(workers) > _LISTED:
            listed += ", and %d more" % (len(workers) - _LISTED)
        return "%d thread%s of native thread pools wait%s for work, running no Python: %s" % (
            len(workers), "" if len(workers) == 1 else "s", "s" if len(workers) == 1 else "", listed)
    if v.kind == VerdictKind.EXECUTOR_STARVATION:
        f = v.facts
        return ("every worker of the ThreadPoolExecutor whose work queue is 0x%x (%s) waits for the result of a "
                "pending concurrent.futures.Future, which no worker has taken: if they were submitted to this pool, "
                "none can ever run (starvation)%s" % (
                    f.work_queue, ", ".join(names(t) for t in f.workers),
                    "" if f.confidence == Confidence.CERTAIN else
                    "; likely, not certain: pyhang does not read the pool's queue of work, so that these futures "
                    "are waiting in it is not proven"))
    if v.kind == VerdictKind.NOTHING_CAN_WAKE:
        return nothing_can_wake_text(v.facts, names)
    if v.kind == VerdictKind.POOL_TASK_LOST:
        return pool_task_lost_text(v.facts, names)
    if v.kind == VerdictKind.HELD_ACROSS_SLEEP:
        return held_across_sleep_text(v.facts, names)
    if v.kind == VerdictKind.SERVER_DIED:
        return server_died_text(v.facts, names)
    if v.kind == VerdictKind.COLLECTIVE_MISMATCH:
        return collective_mismatch_text(v.facts)
    if v.kind == VerdictKind.OWNERS_UNKNOWN:
        waits = v.facts.waits
        return "%s blocked, and pyhang names no thread that will end %s wait%s: %s" % (
            count(len(waits), "thread"), "its" if len(waits) == 1 else "their", "" if len(waits) == 1 else "s",
            folded_waits(waits, names))
    if v.kind == VerdictKind.UNACCOUNTED:
        return unaccounted_text(v.facts, names)
    if v.kind == VerdictKind.NO_PROGRESS:
        n = len(v.threads)
        return ("%s waiting on what pyhang cannot name made no progress in %s s (no CPU time, no wake-up, the same "
                "system call and Python frames), and no thread of the process moved or waits for anything from "
                "outside (a client, a signal, a timer) that could end %s wait%s: %s" % (
                    count(n, "thread"), seconds_text(v.facts.interval), "its" if n == 1 else "their",
                    "" if n == 1 else "s", ", ".join(names(t) for t in v.threads[:_LISTED]) +
                    (", and %d more" % (n - _LISTED) if n > _LISTED else "")))
    if v.kind == VerdictKind.IDLE:
        waits = v.facts.waits
        return "%s wait%s for work or a signal that any thread may give, and no thread waits on %s: %s" % (
            count(len(waits), "thread"), "s" if len(waits) == 1 else "", "it" if len(waits) == 1 else "them",
            folded_waits(waits, names))
    return "%s: %s" % (v.kind, ", ".join(names(t) for t in v.threads))


_LISTED_PER_OBJECT = 4   # threads named of those waiting on one object


def _waited(w):
    """(kind, address, work queue, Pool loop, call, link) of an idle verdict's IdleWait or an owners-unknown
    verdict's UnknownOwnerWait: what it waits on, which folded_waits folds the waits by."""
    if isinstance(w, IdleWait):
        return w.kind, w.address, w.work_queue, w.pool_loop, None, None
    return w.kind, w.address, None, None, w.call, w.link


def _waited_text(w):
    """"threading.Event 0x… (__main__.stop)", or "the work queue 0x… of their ThreadPoolExecutor"."""
    kind, address, work_queue, pool_loop, call, link = _waited(w)
    if work_queue:
        return "the work queue 0x%x of their ThreadPoolExecutor" % work_queue
    if pool_loop == "worker":
        return "its multiprocessing Pool's task queue (a worker between tasks, fed by the pool's parent)"
    if pool_loop:
        return "its multiprocessing Pool's workers (the pool's %s thread)" % pool_loop
    if kind == WaitKind.SYSCALL:
        return ("the %s system call" % call if call else "a system call") + (" on %s" % link if link else "")
    name = object_name(w.name) if w.name else None
    return lock_text(kind, address) + (" (%s)" % name if name else "")


def folded_waits(waits, names):
    """"Thread 3 (LWP 9) on threading.Semaphore 0x…; 400 threads on threading.Event 0x… (__main__.stop): Thread
    4 (LWP 10), …, and 396 more": the waits of a verdict's facts (IdleWaits or UnknownOwnerWaits), one part
    per object waited on."""
    groups = {}
    for w in waits:
        groups.setdefault(_waited(w), []).append(w)
    parts = []
    for members in list(groups.values())[:_LISTED]:
        what = _waited_text(members[0])
        if len(members) == 1:
            parts.append("%s on %s" % (names(members[0].tid), what))
            continue
        listed = ", ".join(names(w.tid) for w in members[:_LISTED_PER_OBJECT])
        more = ", and %d more" % (len(members) - _LISTED_PER_OBJECT) if len(members) > _LISTED_PER_OBJECT else ""
        parts.append("%d threads on %s: %s%s" % (len(members), what, listed, more))
    if len(groups) > _LISTED:
        parts.append("and %d more objects" % (len(groups) - _LISTED))
    return "; ".join(parts)


# The word a verdict's line starts with.
TITLES = {VerdictKind.EXECUTOR_STARVATION: "Starvation", VerdictKind.ASYNCIO_LOOP_BLOCKED: "Event loop blocked",
          VerdictKind.GIL_HOLDER_BLOCKED: "GIL holder blocked", VerdictKind.GIL_NOBODY_HOLDS: "GIL held by nobody",
          VerdictKind.NOTHING_CAN_WAKE: "Nothing can wake", VerdictKind.OWNER_GONE: "Owner gone",
          VerdictKind.POOL_TASK_LOST: "Pool task lost", VerdictKind.SERVER_DIED: "Server died",
          VerdictKind.COLLECTIVE_MISMATCH: "Ranks diverged",
          VerdictKind.HOLDER_EXITED: "Holder exited",
          VerdictKind.INCOMPLETE: "Report incomplete", VerdictKind.OWNERS_UNKNOWN: "Owner unknown",
          VerdictKind.WAITS_ON_PROCESS: "Waits on another process", VerdictKind.GIL_HANDOVER: "GIL handover",
          VerdictKind.POOL_IDLE: "Idle", VerdictKind.IDLE: "Idle", VerdictKind.UNACCOUNTED: "Not accounted for",
          VerdictKind.NO_PROGRESS: "No progress", VerdictKind.HELD_ACROSS_SLEEP: "Held across a sleep"}

# What the first line says of a hang without a cycle (ExitStatus.HUNG), most serious first.
HANG_SUMMARIES = {VerdictKind.EXECUTOR_STARVATION: "a ThreadPoolExecutor starves itself",
                  VerdictKind.ASYNCIO_LOOP_BLOCKED: "an asyncio event loop is blocked",
                  HazardKind.ORPHANED_LOCK: "a lock was copied locked by fork",
                  HazardKind.OPENMP_AFTER_FORK: "a thread waits in an OpenMP pool fork did not copy",
                  HazardKind.GRPC_AFTER_FORK: "a gRPC call waits for threads fork did not copy",
                  VerdictKind.GIL_HOLDER_BLOCKED: "the GIL's holder sleeps without releasing it",
                  VerdictKind.GIL_NOBODY_HOLDS: "every Python thread waits for a GIL nobody holds",
                  VerdictKind.NOTHING_CAN_WAKE: "a Queue.get nothing can fill",
                  VerdictKind.POOL_TASK_LOST: "a multiprocessing.Pool task was lost",
                  VerdictKind.SERVER_DIED: "a process that would have served a wait died",
                  VerdictKind.COLLECTIVE_MISMATCH: "ranks of a distributed job wait in different collectives",
                  VerdictKind.OWNER_GONE: "a lock's owner is gone",
                  VerdictKind.HOLDER_EXITED: "a lock's holder most likely exited",
                  VerdictKind.NO_PROGRESS: "blocked threads made no progress and nothing can end their waits",
                  VerdictKind.HELD_ACROSS_SLEEP: "a lock is held across a long sleep"}

# The next step for each verdict: what to change, or what to look at next.
ADVICE = {
    VerdictKind.EXECUTOR_STARVATION: "a task must not wait for another task of its own pool: run the inner work in a "
                                     "second executor, or give the pool more workers than tasks can nest",
    VerdictKind.ASYNCIO_LOOP_BLOCKED: "never call a blocking function in a coroutine: await its asyncio counterpart, "
                                      "or run it with asyncio.to_thread / loop.run_in_executor",
    VerdictKind.GIL_HOLDER_BLOCKED: "the code on this thread's native stack must release the GIL around the blocking "
                                    "call (Py_BEGIN_ALLOW_THREADS in C, nogil in Cython, py::gil_scoped_release in "
                                    "pybind11)",
    VerdictKind.GIL_NOBODY_HOLDS: "look again: if it lasts, a C extension released a GIL it did not hold or a thread "
                                  "exited holding it; the native frames of the threads below show which",
    VerdictKind.NOTHING_CAN_WAKE: "check that the producer did not exit (an exception in it ends it silently) and "
                                  "give get() a timeout, or put a sentinel from a finally block",
    VerdictKind.POOL_TASK_LOST: "look for the worker that died (`journalctl -k` or `dmesg`: \"Out of memory: Killed "
                                "process\"); concurrent.futures.ProcessPoolExecutor raises BrokenProcessPool instead "
                                "of waiting for ever, and map_async(...).get(timeout) bounds the wait",
    VerdictKind.SERVER_DIED: "find why the dead process died (a SIGKILL it did not send itself is most often the "
                             "OOM killer's: `journalctl -k` or `dmesg`); a parent must watch its workers while it waits "
                             "for them: multiprocessing.connection.wait() on the result pipe and each "
                             "Process.sentinel, or get(timeout=...) and Process.is_alive() as torch's DataLoader "
                             "does, or concurrent.futures.ProcessPoolExecutor, which raises BrokenProcessPool",
    VerdictKind.COLLECTIVE_MISMATCH: "find where the diverged ranks' code path parts from the others' (a collective "
                                     "under a condition only some ranks take, an exception caught on one rank); "
                                     "TORCH_DISTRIBUTED_DEBUG=DETAIL makes torch check that every rank calls the "
                                     "same collective, and dist.monitored_barrier (gloo) names the ranks that "
                                     "did not arrive",
    VerdictKind.OWNER_GONE: "a thread ended (or was killed) holding the lock: take locks in `with` blocks; in a fork "
                            "child, see `pyhang fork-hazards`",
    VerdictKind.HOLDER_EXITED: "a client that dies holding a manager's Lock leaves it locked in the server: "
                               "release it in a `finally` block, take it with acquire(timeout=...), and make a new "
                               "Lock (or restart the manager) after a client was killed",
    VerdictKind.OWNERS_UNKNOWN: "find the thread meant to release, set or complete each object: "
                                "`pyhang report --locals` shows which frames hold it",
    VerdictKind.HELD_ACROSS_SLEEP: "never sleep holding a lock: leave the `with` block (or release()) before "
                                   "time.sleep, or wait on a threading.Condition of that lock with wait(timeout), "
                                   "which releases it while it waits",
    VerdictKind.GIL_HANDOVER: "look again: one of these threads should hold the GIL by then",
    VerdictKind.NO_PROGRESS: "find who was meant to end each wait (its object and frames below; `pyhang report "
                             "--locals` shows which frames hold it): nothing in the process is going to",
    VerdictKind.UNACCOUNTED: "judge these waits from their facts: where another process holds the other end, "
                             "`pyhang report --tree -p PID` from a common ancestor looks at both; a core gdb or "
                             "the kernel wrote holds no fd table, the live process and a core `pyhang gcore` "
                             "wrote do",
}

# A deadlock's next step, by what its threads wait on.
DEADLOCK_ADVICE = {
    DeadlockKind.AWAIT: "these tasks await each other: the cycle must be broken in the code (asyncio.wait_for "
                        "with a timeout shows where at run time)",
    WaitKind.GIL: "a thread that holds the GIL waits for a lock held by a thread that waits for the GIL: release "
                  "the GIL before blocking on that lock (Py_BEGIN_ALLOW_THREADS in C, py::gil_scoped_release in "
                  "pybind11, nogil in Cython)",
    WaitKind.SQLITE_BUSY: "commit (or roll back) the open transaction before waiting for work that writes to the "
                          "same database, or do that work on the connection that holds it",
    "pool": "a thread that holds a pool's connection must not wait for a thread that needs one: return it first "
            "(close the Connection or leave its `with` block, read a streamed response to its end), or size the pool "
            "(pool_size + max_overflow, maxsize) for every thread that holds one while it waits; a checkout timeout "
            "turns the hang into an error",
    "database": "commit (or roll back) the open transaction before waiting for another thread, and give "
                "PostgreSQL a lock_timeout (SET lock_timeout) so that a query waiting for a row lock fails instead "
                "of waiting forever; pg_locks and pg_stat_activity on the server show who blocks whom",
    None: "take these locks in one order in every thread (or with a timeout), and never wait for a thread while "
          "holding what it needs",
}


SIGNAL_HANDLER_ADVICE = ("a signal handler runs between two lines of the code it interrupts, in the same thread: "
                         "it must not take a lock that code may hold (not even an RLock, which would let it in "
                         "mid-update); set a flag or put the work on a queue for another thread, or use "
                         "signal.set_wakeup_fd")
SELF_WAIT_ADVICE = {
    WaitKind.PY_LOCK: "a Lock is not re-entrant: where code that holds it calls code that takes it again, use "
                      "threading.RLock or take it only at the outer level; a signal handler must not take a lock "
                      "the code it interrupts may hold (set a flag, or use signal.set_wakeup_fd)",
    WaitKind.PY_FUTURE: "on the event loop's own thread, never wait on the Future of run_coroutine_threadsafe(): "
                        "await the coroutine itself (or `await asyncio.wrap_future(future)`); "
                        "run_coroutine_threadsafe(...).result() is for other threads",
    None: "a normal mutex is not re-entrant: make it PTHREAD_MUTEX_RECURSIVE, or take it only at the outer level "
          "(PTHREAD_MUTEX_ERRORCHECK makes a second lock fail with EDEADLK instead of hanging)",
}


def deadlock_advice(d):
    """The advice line of deadlock `d` (model.report.Deadlock)."""
    if d.kind == DeadlockKind.AWAIT:
        return DEADLOCK_ADVICE[DeadlockKind.AWAIT]
    if len(d.threads) == 1 and d.edges:
        if isinstance(d.edges[0].facts, LockSelfFacts) and d.edges[0].facts.handler:
            return SIGNAL_HANDLER_ADVICE
        return SELF_WAIT_ADVICE.get(d.edges[0].kind, SELF_WAIT_ADVICE[None])
    for kind in (WaitKind.GIL, WaitKind.SQLITE_BUSY):
        if any(e.kind == kind for e in d.edges):
            return DEADLOCK_ADVICE[kind]
    if any(isinstance(e.facts, DatabaseFacts) for e in d.edges):
        return DEADLOCK_ADVICE["database"]
    if any(isinstance(e.facts, PoolCheckoutFacts) for e in d.edges):
        return DEADLOCK_ADVICE["pool"]
    return DEADLOCK_ADVICE[None]


def verdict_advice(v, report=None):
    """The advice line of verdict `v` (of `report`), or None when it needs none (idle threads, a wait whose
    next step its own sentence gives)."""
    if v.kind == VerdictKind.INCOMPLETE:
        if report is not None and report.target.kind == "core" and files_missing(report.warnings):
            return "the native stacks and system-call waits below still hold; this part is read once the core is " \
                   "given the files of the root it ran in (--sysroot, as the warning above says)"
        if v.facts.unread == Unread.LOCK_LAYOUTS:
            sysroot = "a core of a process that ran in another root file system (a container) is read with its " \
                      "own libc given `--sysroot ROOT`; else " if report is not None and \
                report.target.kind == "core" else ""
            return sysroot + "in gdb with libc's debug symbols (libc6-dbg), `lock-owner` on these threads names " \
                             "the owners"
        return "the native stacks and system-call waits below still hold; `pyhang report CORE PYTHON` names the " \
               "interpreter when a core's executable moved"
    if v.kind == VerdictKind.GIL_HOLDER_BLOCKED and v.facts.ctypes:
        return CTYPES_ADVICE
    if v.kind == VerdictKind.NOTHING_CAN_WAKE and v.facts.kind in QUEUE_ADVICE:
        return QUEUE_ADVICE[v.facts.kind]
    return ADVICE.get(v.kind)


CTYPES_ADVICE = "load the library with ctypes.CDLL, not ctypes.PyDLL: CDLL releases the GIL around each call " \
                "(PyDLL keeps it, for functions that call the Python C API); a function of ctypes.pythonapi cannot " \
                "block without holding it"

QUEUE_ADVICE = {
    WaitKind.PY_QUEUE_PUT: "check that the consumer did not exit (an exception in it ends it silently); give put() a "
                           "timeout, or let the consumer's finally block drain the queue",
    WaitKind.PY_QUEUE_JOIN: "call task_done() once for every item get() returned, in a `finally:` block so that an "
                            "exception in the consumer cannot skip it",
}


def findings(report):
    """The verdicts and fork hazards of `report`, most serious first (model.kinds.SEVERITY)."""
    return sorted(list(report.verdicts) + list(report.fork_hazards), key=lambda f: severity(f.kind))


# What the first line says of a queue nothing can wake, by the queue wait (its facts' "kind").
QUEUE_SUMMARIES = {WaitKind.PY_QUEUE_PUT: "a Queue.put nothing can drain",
                   WaitKind.PY_QUEUE_JOIN: "a Queue.join nothing will finish"}


def hang_summaries(report):
    """What the first line says of each finding that makes `report` a hang without a cycle, most serious first."""
    if report.exit_status != ExitStatus.HUNG:
        return []
    out = []
    for f in findings(report):
        if f.kind in HANG_VERDICTS or (isinstance(f, Hazard) and f.hangs):
            queue = QUEUE_SUMMARIES.get(f.facts.kind) if f.kind == VerdictKind.NOTHING_CAN_WAKE else None
            out.append(queue or HANG_SUMMARIES[f.kind])
    return out


def headline(report):
    """The first line of the report's answer: its deadlocks, else what hangs without a cycle, else why
    nothing can be said, else the all-clear."""
    if report.deadlocks:
        n = len(report.deadlocks)
        return "Found one deadlock (%s)." % report.deadlocks[0].confidence if n == 1 else \
            "Found %d deadlocks." % n
    hangs = hang_summaries(report)
    if hangs:
        return "Hung without a deadlock: %s." % "; ".join(dict.fromkeys(hangs))
    reasons = incomplete_reasons(report)
    if reasons:
        return "Report incomplete: %s; no deadlock can be ruled out." % " and ".join(reasons)
    elsewhere = [t for t in report.threads if t.account is not None and t.account.state == ThreadState.ELSEWHERE]
    if any(v.kind == VerdictKind.WAITS_ON_PROCESS for v in report.verdicts) or elsewhere:
        return waits_on_others_headline(report)
    unknown = next((v for v in report.verdicts if v.kind == VerdictKind.OWNERS_UNKNOWN), None)
    unmodeled = next((v for v in report.verdicts if v.kind == VerdictKind.UNACCOUNTED), None)
    if unmodeled is not None:
        n = len(set(unmodeled.threads) | set(unknown.threads if unknown is not None else ()))
        return ("Not accounted for: %s wait%s on what pyhang cannot name or does not model; no deadlock among the "
                "waits it can name." % (count(n, "thread"), "s" if n == 1 else ""))
    if unknown is not None:
        n = len(unknown.threads)
        return ("Blocked: %s wait%s on objects whose owner pyhang cannot name; no deadlock among the waits whose "
                "owners it can name." % (count(n, "thread"), "s" if n == 1 else ""))
    if report.exit_status == ExitStatus.NO_PYTHON:
        return NO_PYTHON_FOUND
    return NOTHING_FOUND


def waits_on_others_headline(report):
    """"Waits on PID 7: …": a process whose threads wait on other processes leads with them."""
    pids = []
    for v in report.verdicts:
        if v.kind == VerdictKind.WAITS_ON_PROCESS:
            pids += [p for w in v.facts.waits for p in w.pids or ()]
    pids += [p for t in report.threads if t.account is not None and t.account.state == ThreadState.ELSEWHERE
             for p in t.account.pids]
    pids = sorted(dict.fromkeys(pids))
    who = _pids_text(pids[:_LISTED]) + (" and %d more" % (len(pids) - _LISTED) if len(pids) > _LISTED else "") \
        if pids else "another process"
    return "%s%s: %s" % (WAITS_PREFIX, who, WAITS_ON_OTHERS_TAIL)


NOTHING_FOUND = "No deadlock found."
NO_PYTHON_FOUND = "No deadlock found; this process runs no Python: only its native threads and glibc locks were read."
WAITS_PREFIX = "Waits on "
WAITS_ON_OTHERS_TAIL = "no deadlock within this process, and whether its wait ends is up to what it waits on, " \
                       "which this report does not look at."
IN_TREE_WAITS = "No deadlock found within this process; what it waits on in other processes is said above."

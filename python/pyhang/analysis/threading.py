"""The threading module's Thread objects of one process (the snapshot's
`threading`: model.threading_facts.ThreadingState), indexed: the Python name of
each thread, and which thread a join waits for."""
from pyhang.model.kinds import Confidence, ExitPath, JoinEvidence, OwnerSource, WaitKind
from pyhang.model.report import BlockedOn
from pyhang.model.waits import JoinDetail


class KnownThread:
    """A Thread object (model.threading_facts.ThreadObject) and the LWP it
    runs on (None: not known)."""
    __slots__ = ("thread", "tid")

    def __init__(self, thread, tid):
        self.thread, self.tid = thread, tid


class PythonThreads:
    def __init__(self, threading, view):
        """`threading`: the ThreadingState of the process, or None."""
        self.ident_tid = ident_tid = {t.thread_id: t.native_tid for t in view.threads if t.native_tid}
        self.by_tid, self.by_object, self.by_tstate_lock = {}, {}, {}
        self.handles = []  # (C ThreadHandle address, KnownThread), 3.13+
        for t in threading.threads if threading is not None else ():
            # _native_id (3.8+) is the LWP; before, _ident is the pthread_t the thread states record.
            entry = KnownThread(t, t.native_id or ident_tid.get(t.ident))
            if entry.tid:
                self.by_tid.setdefault(entry.tid, entry)
            if t.object:
                self.by_object[t.object] = entry
            if t.tstate_lock:
                self.by_tstate_lock[t.tstate_lock] = entry
            if t.handle_struct:
                self.handles.append((t.handle_struct, entry))

    def tid_of_ident(self, ident):
        """The LWP of a pthread_t (threading.get_ident()), or None."""
        return self.ident_tid.get(ident)

    def name(self, tid):
        """The threading.Thread name of the thread `tid`, or None."""
        t = self.by_tid.get(tid)
        return t.thread.name if t else None

    def joined(self, python_lock):
        """The KnownThread a thread waits for to end, from what the
        Python-lock search found: the Thread whose _tstate_lock it waits on
        (Thread.join and interpreter exit, 3.6–3.12), or the `self` of its
        join frame (3.13+, where join waits on a _ThreadHandle)."""
        if python_lock is None:
            return None
        found = None
        if python_lock.kind == WaitKind.PY_LOCK:
            found = self.by_tstate_lock.get(python_lock.object)
        if found is None and python_lock.join_self:
            found = self.by_object.get(python_lock.join_self)
        return found

    def parked_on_handle(self, python_lock):
        """The KnownThread whose C ThreadHandle holds what the thread is
        parked on (3.13+): a join, or interpreter exit's _thread._shutdown,
        parks on the handle's thread_is_exiting PyEvent, which its
        parking-lot entry names; None when it is not parked on one."""
        at = python_lock.parking_address if python_lock is not None else None
        if not at:
            return None
        return next((entry for start, entry in self.handles if start <= at < start + THREAD_HANDLE_BYTES), None)


    def running_non_daemon(self, but):
        """The KnownThreads of the non-daemon threads other than `but` (a
        TID) that have an LWP: those interpreter exit waits for."""
        return [t for t in self.by_object.values() if t.thread.daemon is False and t.tid and t.tid != but]


def _at_exit(frames):
    """Whether the interpreter is exiting on this thread: threading._shutdown
    (which joins every non-daemon thread) is among its Python frames."""
    return any(f.function.endswith("_shutdown") and f.file.endswith("threading.py") for f in frames)


# multiprocessing's exit: util._exit_function runs its finalizers (util.py), a Queue's one joins its feeder
# thread (queues.py Queue._finalize_join), which must first write everything put to the queue into its pipe.
_MP_EXIT = ("multiprocessing/util.py", ("_exit_function", "_run_finalizers"))
_MP_FEEDER_JOIN = ("multiprocessing/queues.py", ("_finalize_join", "Queue._finalize_join"))


def exiting(report, threading_state):
    """Marks the thread that runs the interpreter's exit (ThreadReport.exiting) once threading._shutdown
    has begun (ThreadingState.shutting_down): the main thread, in threading._shutdown (joining the
    non-daemon threads) or, after it, in what runs then: atexit callbacks and the finalizers they call."""
    if threading_state is None or not threading_state.shutting_down:
        return
    main = report.thread(report.target.pid) if report.target.pid else None
    main = main or next((t for t in report.threads if t.gdb_num == 1), None)
    if main is None or not main.python_frames:
        return
    if _at_exit(main.python_frames):
        main.exiting = ExitPath.THREADING_SHUTDOWN
    elif main.python_frames[-1].function != "<module>":
        # the main module's code has returned: what runs now was called by the interpreter's exit (a fork
        # child's main thread still under its parent's <module> frame, past its own threading._shutdown,
        # runs multiprocessing's exit code, no atexit callback)
        main.exiting = ExitPath.ATEXIT


def exit_path(frames):
    """The model.kinds.ExitPath of a join made by a thread with these Python frames (PyFrameFacts or
    PythonFrames), or None when it is no part of an exit."""
    def has(where):
        return any(f.function in where[1] and (f.file or "").endswith(where[0]) for f in frames)
    if not has(_MP_EXIT):
        return None
    return ExitPath.QUEUE_FEEDER if has(_MP_FEEDER_JOIN) else ExitPath.FINALIZERS


def join_wait(python_lock, joined, frames):
    """BlockedOn for a join on the Thread `joined` (PythonThreads.joined) by
    a thread with these Python frames (PyFrameFacts)."""
    tid = joined.tid
    return BlockedOn(kind=WaitKind.PY_JOIN, address=joined.thread.object, owners=[tid] if tid else [],
                     owner_source=OwnerSource.THREAD_OBJECT if tid else OwnerSource.UNKNOWN,
                     confidence=Confidence.CERTAIN,
                     join=JoinDetail(name=joined.thread.name, daemon=joined.thread.daemon, shutdown=_at_exit(frames),
                                     exiting=exit_path(frames), joined_by=JoinEvidence.TSTATE_LOCK if python_lock.kind == WaitKind.PY_LOCK
                                     else JoinEvidence.HANDLE))


# A C ThreadHandle (Modules/_threadmodule.c, 3.13+: two list nodes, ident,
# handle, state, once flag, mutex, the thread_is_exiting PyEvent, refcount)
# is under 128 bytes: an address parked on inside it belongs to it.
THREAD_HANDLE_BYTES = 128


def shutdown_wait(frames, python_threads, tid, python_lock=None):
    """BlockedOn for interpreter exit on 3.13+, or None: threading._shutdown
    (the innermost Python frame) calls _thread._shutdown, which joins every
    non-daemon thread in C, on no Thread object a frame references.  When
    the thread is parked on the thread_is_exiting event of a Thread's
    _handle (its parking-lot entry names it), that Thread is the one joined
    now: certain.  Otherwise the threads waited for are the non-daemon ones
    threading knows of: likely, as they come from threading's bookkeeping,
    not from the handles joined."""
    if not frames or not _at_exit(frames[:1]):
        return None
    parked = python_threads.parked_on_handle(python_lock)
    if parked is not None and parked.tid:
        # The handle _thread._shutdown joins now: certain, as a join on its Thread is.
        return BlockedOn(kind=WaitKind.PY_JOIN, address=parked.thread.object, owners=[parked.tid],
                         owner_source=OwnerSource.THREAD_OBJECT, confidence=Confidence.CERTAIN,
                         join=JoinDetail(name=parked.thread.name, names=[parked.thread.name], daemon=False,
                                         shutdown=True, joined_by=JoinEvidence.SHUTDOWN_HANDLE))
    waited = python_threads.running_non_daemon(tid)
    if not waited:
        return None
    return BlockedOn(kind=WaitKind.PY_JOIN, address=waited[0].thread.object, owners=[t.tid for t in waited],
                     owner_source=OwnerSource.THREAD_OBJECT, confidence=Confidence.LIKELY,
                     join=JoinDetail(name=waited[0].thread.name if len(waited) == 1 else None,
                                     names=[t.thread.name for t in waited], daemon=False, shutdown=True,
                                     joined_by=JoinEvidence.SHUTDOWN_ACTIVE))

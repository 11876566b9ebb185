"""What a blocked thread waits on, from the lock facts collected for it.

The native decoders say which glibc lock a futex word belongs to
(ThreadSnapshot.lock), which threading Lock/RLock/Condition a Python thread
sleeps on (ThreadSnapshot.python_lock), and the value of the futex word
(ThreadSnapshot.futex_word).  This module decides which of them is the
answer (which facts a thread needs is analysis.gather's rule).
"""
import bisect

from pyhang.analysis import collectives, grpc_calls, syscalls
from pyhang.analysis.python_api import api_wait
from pyhang.analysis.threading import join_wait, shutdown_wait
from pyhang.libraries import SQLITE_LIBRARIES, is_one_of
from pyhang.model.kinds import Confidence, GilState, OwnerSource, QueueType, WaitKind
from pyhang.model.report import BlockedOn
from pyhang.model.waits import ApiDetail, PythonLockDetail, PythonLockEvidence, syscall_of

# A threading Lock/RLock/Condition sleeps on a sem_t the lock object points
# to: glibc's decoders see a semaphore or a bare futex word.
PYTHON_LOCK_LOOKALIKES = (WaitKind.SEMAPHORE, WaitKind.FUTEX)

# struct pthread is a few KiB; its tid field is near the start.
PTHREAD_SPAN = 4096


def from_native(identified):
    """BlockedOn from the native lock identification (LockIdentification),
    or None when the thread is not waiting on a lock."""
    if identified is None or not identified.kind:
        return None
    return BlockedOn(kind=identified.kind, address=identified.address, library=identified.library,
                     symbol=identified.symbol,
                     owners=list(identified.owners), owner_source=identified.owner_source or OwnerSource.UNKNOWN,
                     confidence=identified.confidence, evidence=identified.evidence, glibc=identified.lock,
                     condvar_mutex=identified.condvar_mutex)


def named_objects(lock, python_lock, python_api):
    """The addresses that may become the `address` of a thread's BlockedOn
    (blocked_on()), which the collection asks a variable name for
    (PythonLocks.object_names).  The search reads memory until it has named
    every address or run out of places to look: an address no variable can
    hold would make it read everything, every time.  So not the waiter lock
    of a Condition.wait (a local of the wait; the Condition is named), nor
    the lock word inside a Python lock a thread sleeps on."""
    out = []
    if python_lock is not None and python_lock.is_wait():
        out.append(python_lock.condition if python_lock.kind == WaitKind.PY_CONDITION else python_lock.object)
        out.append(python_lock.join_self)
    elif lock is not None:
        out.append(lock.address)
    if python_api is not None:
        out.append(python_api.object)
    return [a for a in out if a]


def _python_lock_evidence(wait):
    """How the search found it (None when it found no lock object: the native search finds one whenever it
    names a kind)."""
    if not wait.found:
        return None
    return PythonLockEvidence(found=wait.found, futex=wait.futex, word=wait.wait_address, type=wait.type_name,
                              object=wait.object, found_in=wait.found_in, slot=wait.slot, via_method=wait.via_method,
                              frame=wait.frame, condition=wait.condition if wait.kind == WaitKind.PY_CONDITION else None)


def from_python(wait):
    """BlockedOn from the Python-lock search (a PythonLockWait: a threading
    Lock, RLock or Condition the thread waits on), or None when it is not one."""
    kind = wait.kind if wait is not None else None
    if not kind:
        return None
    b = BlockedOn(kind=kind, address=wait.object or None, owner_source=wait.owner_source or OwnerSource.UNKNOWN,
                  confidence=wait.confidence, evidence=_python_lock_evidence(wait))
    if kind == WaitKind.PY_RLOCK and wait.owner_tid:
        b.owners = [wait.owner_tid]
        b.owner_source = OwnerSource.LOCK_WORD
        b.python = PythonLockDetail(recursion=wait.count)
    elif kind == WaitKind.PY_RLOCK and wait.owner_thread_id:
        # The RLock records its holder's pthread_t, which the decoder did not
        # map to a thread: settle() looks for it among the threads' struct pthreads.
        b.python = PythonLockDetail(recursion=wait.count, owner_ident=wait.owner_thread_id)
    elif kind == WaitKind.PY_LOCK:
        b.owner_source = OwnerSource.UNKNOWN
        b.python = PythonLockDetail(suspects=list(wait.suspects), locked=wait.locked,
                                    suspect_frames=list(wait.suspect_frames), self_frames=list(wait.self_frames))
    elif kind == WaitKind.PY_BUFFERED_IO:
        # The buffered object records its holder's pthread_t while it holds the lock.
        b.python = PythonLockDetail(type=wait.type_name, stream=wait.stream_name,
                                    owner_ident=wait.owner_thread_id or None, found_in=wait.found_in)
        if wait.owner_tid:
            b.owners = [wait.owner_tid]
            b.owner_source = OwnerSource.LOCK_WORD
        else:
            b.owner_source = OwnerSource.UNKNOWN
    elif kind == WaitKind.PY_QUEUE_GET:
        # A get on an empty queue.SimpleQueue (C, no frame of its own): found on its caller's frame.
        b.api = ApiDetail(type=QueueType.SIMPLE, frame=wait.frame)
    elif kind == WaitKind.PY_CONDITION:
        b.address = wait.condition or b.address
        b.owner_source = OwnerSource.UNKNOWN
        b.python = PythonLockDetail(condition_lock=wait.condition_lock, condition_lock_type=wait.condition_lock_type,
                                    condition_lock_owner=wait.condition_lock_owner_tid)
    return b


def thread_join(address, joined_tid):
    """pthread_join: the joined thread is what the joiner waits for."""
    return BlockedOn(kind=WaitKind.THREAD_JOIN, address=address, owners=[joined_tid],
                     owner_source=OwnerSource.THREAD_TID, confidence=Confidence.CERTAIN)


def gil_wait(holder_tid):
    return BlockedOn(kind=WaitKind.GIL, owners=[holder_tid] if holder_tid else [],
                     owner_source=OwnerSource.GIL_STATE if holder_tid else OwnerSource.UNKNOWN,
                     confidence=Confidence.CERTAIN)


def thread_bases(threads):
    """fs_base (the thread's struct pthread on x86_64) → TID."""
    return {t.registers["fs_base"]: t.tid for t in threads if "fs_base" in t.registers}


class _Bases:
    """thread_bases() sorted, for one lookup per blocked thread in log time."""

    def __init__(self, bases):
        self.bases = bases
        self.starts = sorted(bases)


def joined_thread(futex, word, bases):
    """pthread_join sleeps on the joined thread's tid word inside its struct
    pthread, whose value is that thread's TID: the TID when `futex` is such a
    word holding `word`, else None.  `bases`: thread_bases(), or a _Bases."""
    if futex is None or word is None:
        return None
    if not isinstance(bases, _Bases):
        bases = _Bases(bases)
    i = bisect.bisect_right(bases.starts, futex) - 1
    # struct pthreads do not overlap: only the nearest one below can hold it
    if i >= 0 and futex < bases.starts[i] + PTHREAD_SPAN and bases.bases[bases.starts[i]] == word:
        return word
    return None


def sorted_bases(bases):
    """thread_bases() prepared for many joined_thread() calls."""
    return _Bases(bases)


def blocked_on(view, thread, gil, gil_holder, bases, python_threads, files=None):
    """What `thread` (a ThreadSnapshot) waits on (BlockedOn), or None.
    `gil` is its GIL state, `gil_holder` the TID holding the GIL (or None),
    `bases` thread_bases() of the process, `python_threads` its
    analysis.threading.PythonThreads, `files` the process's fds from /proc
    (None when not known) for a thread parked in another system call."""
    b = _blocked_on(view, thread, gil, gil_holder, bases, python_threads, files)
    return grpc_calls.call_wait(b, thread, files)   # a gRPC call's wait, whichever wait it sleeps in


def _blocked_on(view, thread, gil, gil_holder, bases, python_threads, files):
    if gil == GilState.WAITING:
        return gil_wait(gil_holder)
    b = from_native(thread.lock)
    if thread.python_lock is not None and (b is None or b.kind in PYTHON_LOCK_LOOKALIKES):
        joined = python_threads.joined(thread.python_lock)
        if joined is not None:
            return join_wait(thread.python_lock, joined, view.frames(thread.tid))
        py = from_python(thread.python_lock)
        api = api_wait(thread.python_api, py, python_threads.tid_of_ident)
        if api is not None:
            return api
        if py is not None:
            return py
    if (b is None or b.kind in PYTHON_LOCK_LOOKALIKES) and syscalls.futex_address(thread.registers) is not None:
        exiting = shutdown_wait(view.frames(thread.tid), python_threads, thread.tid,
                                thread.python_lock)
        if exiting is not None:
            return exiting
    if b is not None and b.kind == WaitKind.FUTEX and not b.owners:
        joined = joined_thread(b.address, thread.futex_word, bases)
        if joined is not None:
            b = thread_join(b.address, joined)
    if b is None:
        b = sqlite_busy(syscalls.syscall_wait(thread, files), thread.frames)
    return collectives.collective_wait(b, view.frames(thread.tid), thread.collective, thread.frames)


_SLEEPS = ("nanosleep", "clock_nanosleep")


def in_sqlite_busy(registers, frames):
    """Whether a thread (its registers and native frames) sleeps with SQLite on its stack."""
    found = syscalls.parked(registers)
    return found is not None and found[1] in _SLEEPS and any(is_one_of(f.library, SQLITE_LIBRARIES) for f in frames)


def sqlite_busy(b, frames):
    """`b`, or, for a thread asleep with SQLite on its native stack, the wait
    SQLite's busy handler makes: another connection holds a lock on the
    database, and it sleeps and retries until its busy timeout.  Likely:
    the program could call sqlite3_sleep() itself."""
    if syscall_of(b).name not in _SLEEPS:
        return b
    library = next((f.library for f in frames if is_one_of(f.library, SQLITE_LIBRARIES)), None)
    if library is None:
        return b
    return BlockedOn(kind=WaitKind.SQLITE_BUSY, owner_source=OwnerSource.UNKNOWN, confidence=Confidence.LIKELY,
                     library=library, syscall=b.syscall)


def wants_thread_bases(b):
    """Whether settle() needs the threads' struct pthreads (sorted_bases()):
    a buffered I/O lock or an RLock whose recorded holder the decoder did not
    map to a TID."""
    return b is not None and b.kind in (WaitKind.PY_BUFFERED_IO, WaitKind.PY_RLOCK) and not b.owners and \
        b.python is not None and bool(b.python.owner_ident)


def settle(b, alive, bases=None):
    """owner_alive, once the threads of the process (`alive`: TIDs) are
    known.  `bases`: sorted_bases() of the process, for the holder of a
    buffered I/O lock that the decoder could not map to a TID: the thread
    whose struct pthread (fs_base) is the pthread_t the lock records, and
    when every thread's is known and none is it, a holder that does not
    exist here (BlockedOn.python.owner_gone: a lock copied locked by fork, or whose
    holder died)."""
    if wants_thread_bases(b):
        found = bases.bases.get(b.python.owner_ident) if bases is not None else None
        if found is not None:
            b.owners, b.owner_source = [found], OwnerSource.LOCK_WORD
        elif bases is not None and alive and len(bases.bases) == len(alive):
            b.python.owner_gone = True
    if b is not None and b.owners:
        b.owner_alive = all(t in alive for t in b.owners)
    return b

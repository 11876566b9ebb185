"""The threading module's Thread objects of one process (the snapshot's
`threading`, from PythonLocks.threading()), indexed: the Python name of
each thread, and which thread a join waits for."""
from pyhang.model.kinds import Confidence, OwnerSource, WaitKind
from pyhang.model.report import BlockedOn


class PythonThreads:
    def __init__(self, threading, view):
        self.ident_tid = ident_tid = {t.get("thread_id"): t.get("native_tid") for t in view.threads
                                      if t.get("native_tid")}
        self.by_tid, self.by_object, self.by_tstate_lock = {}, {}, {}
        for t in (threading or {}).get("threads") or []:
            # _native_id (3.8+) is the LWP; before, _ident is the pthread_t the thread states record.
            entry = dict(t, tid=t.get("native_id") or ident_tid.get(t.get("ident")))
            if entry["tid"]:
                self.by_tid.setdefault(entry["tid"], entry)
            if t.get("object"):
                self.by_object[t["object"]] = entry
            if t.get("tstate_lock"):
                self.by_tstate_lock[t["tstate_lock"]] = entry

    def tid_of_ident(self, ident):
        """The LWP of a pthread_t (threading.get_ident()), or None."""
        return self.ident_tid.get(ident)

    def name(self, tid):
        """The threading.Thread name of the thread `tid`, or None."""
        t = self.by_tid.get(tid)
        return t.get("name") if t else None

    def joined(self, python_lock):
        """The Thread (entry) a thread waits for to end, from what the
        Python-lock search found: the Thread whose _tstate_lock it waits on
        (Thread.join and interpreter exit, 3.6–3.12), or the `self` of its
        join frame (3.13+, where join waits on a _ThreadHandle)."""
        if not python_lock:
            return None
        found = None
        if python_lock.get("kind") == WaitKind.PY_LOCK:
            found = self.by_tstate_lock.get(python_lock.get("object"))
        if found is None and python_lock.get("join_self"):
            found = self.by_object.get(python_lock["join_self"])
        return found


    def running_non_daemon(self, but):
        """The Thread entries of the non-daemon threads other than `but`
        (a TID) that have an LWP: those interpreter exit waits for."""
        return [t for t in self.by_object.values() if t.get("daemon") is False and t.get("tid") and t["tid"] != but]


def _at_exit(frames):
    """Whether the interpreter is exiting on this thread: threading._shutdown
    (which joins every non-daemon thread) is among its Python frames."""
    return any(f["function"].endswith("_shutdown") and f["file"].endswith("threading.py") for f in frames)


def join_wait(python_lock, joined, frames):
    """BlockedOn for a join on the Thread `joined` (PythonThreads.joined) by
    a thread with these Python frames (dicts of the decoded state)."""
    tid = joined.get("tid")
    return BlockedOn(kind=WaitKind.PY_JOIN, address=joined.get("object"), owners=[tid] if tid else [],
                     owner_source=OwnerSource.THREAD_OBJECT if tid else OwnerSource.UNKNOWN,
                     confidence=Confidence.CERTAIN,
                     evidence="the Thread object joined: its %s" % (
                         "_tstate_lock, held until it exits" if python_lock.get("kind") == WaitKind.PY_LOCK
                         else "_handle, set when it exits"),
                     lock={"name": joined.get("name"), "daemon": joined.get("daemon"),
                           "shutdown": _at_exit(frames)})


def shutdown_wait(frames, python_threads, tid):
    """BlockedOn for interpreter exit on 3.13+, or None: threading._shutdown
    (the innermost Python frame) calls _thread._shutdown, which joins every
    non-daemon thread in C, on no Thread object a frame references.  The
    threads waited for are the non-daemon ones threading knows of: likely,
    as they come from threading's bookkeeping, not from the handles joined."""
    if not frames or not _at_exit(frames[:1]):
        return None
    waited = python_threads.running_non_daemon(tid)
    if not waited:
        return None
    return BlockedOn(kind=WaitKind.PY_JOIN, address=waited[0].get("object"), owners=[t["tid"] for t in waited],
                     owner_source=OwnerSource.THREAD_OBJECT, confidence=Confidence.LIKELY,
                     evidence="threading._shutdown joins every non-daemon thread (_thread._shutdown); "
                              "the non-daemon threads of threading._active",
                     lock={"name": waited[0].get("name") if len(waited) == 1 else None,
                           "names": [t.get("name") for t in waited], "daemon": False, "shutdown": True})

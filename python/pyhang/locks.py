"""What a blocked thread waits on, in the report's terms, and the one line
`lock-owner` prints for it.

Inputs are the native decoders' dicts (LockReader.identify, the GIL view of
compose.PythonView); no gdb here.
"""
import os

from pyhang.report import BlockedOn

# The verb of each kind, as in "Thread 1 (LWP 885) waits to write-lock rwlock 0x…".
VERBS = {
    "mutex": "waits to lock mutex",
    "rwlock-read": "waits to read-lock rwlock",
    "rwlock-write": "waits to write-lock rwlock",
    "semaphore": "waits on semaphore",
    "condvar": "waits on condition variable",
    "futex": "waits on futex word",
    "glibc-internal-lock": "waits for glibc-internal lock",
    "thread-join": "waits to join a thread",
    "gil": "waits for the GIL",
    "py-lock": "waits to acquire threading.Lock",
    "py-rlock": "waits to acquire threading.RLock",
    "py-condition": "waits in threading.Condition.wait on Condition",
}


def _short(path):
    return os.path.basename(path) if path else None


def from_native(identified, library_of):
    """BlockedOn from LockReader.identify's dict, or None when the thread is
    not waiting on a lock.  `library_of(address)` names the object holding
    an address (a lock in a library's data), or None (heap, stack)."""
    kind = identified.get("kind")
    if not kind:
        return None
    lock = identified.get("lock") or {}
    address = identified.get("address")
    return BlockedOn(kind=kind, address=address, library=library_of(address) if address else None,
                     owners=list(identified.get("owners") or []),
                     owner_source=identified.get("owner_source") or "unknown",
                     confidence=identified.get("confidence"), evidence=identified.get("evidence"),
                     lock=lock, condvar_mutex=identified.get("condvar_mutex"))


def from_python(wait):
    """BlockedOn from python_lock_wait's dict (a threading Lock, RLock or
    Condition the thread waits on), or None when it is not one."""
    kind = wait.get("kind") if wait else None
    if not kind:
        return None
    b = BlockedOn(kind=kind, address=wait.get("object") or None, owner_source=wait.get("owner_source") or "unknown",
                  confidence=wait.get("confidence"), evidence=wait.get("evidence"))
    if kind == "py-rlock" and wait.get("owner_tid"):
        b.owners = [wait["owner_tid"]]
        b.owner_source = "lock-word"
        b.lock = {"recursion": wait.get("count")}
    elif kind == "py-lock":
        b.owner_source = "unknown"
        b.lock = {"suspects": list(wait.get("suspects") or [])}
    elif kind == "py-condition":
        b.address = wait.get("condition") or b.address
        b.owner_source = "unknown"
        b.lock = {"condition_lock": wait.get("condition_lock"), "condition_lock_type": wait.get("condition_lock_type"),
                  "condition_lock_owner": wait.get("condition_lock_owner_tid")}
    return b


def thread_join(address, joined_tid):
    """pthread_join: the joined thread is what the joiner waits for."""
    return BlockedOn(kind="thread-join", address=address, owners=[joined_tid], owner_source="thread-tid",
                     confidence="certain",
                     evidence="sleeps on the tid word of the joined thread's struct pthread, which holds its TID")


def gil_wait(holder_tid):
    return BlockedOn(kind="gil", owners=[holder_tid] if holder_tid else [],
                     owner_source="gil-state" if holder_tid else "unknown", confidence="certain",
                     evidence="sleeps on a futex inside the GIL's state")


class ThreadNames:
    """TID → "Thread N (LWP x)" for the threads gdb knows."""

    def __init__(self, snapshots):
        self.num = {s.tid: s.num for s in snapshots}

    def alive(self, tid):
        return tid in self.num

    def __call__(self, tid):
        if tid in self.num:
            return "Thread %d (LWP %d)" % (self.num[tid], tid)
        return "LWP %d" % tid


def owner_text(b, names):
    """The part after the colon: who holds it, or why nobody can be named."""
    lock = b.lock or {}
    k = b.kind
    if k == "gil":
        return "held by %s" % names(b.owners[0]) if b.owners else "its holder is not known"
    if k == "semaphore":
        value = lock.get("value")
        return "value %s: a semaphore has no owner" % (value if value is not None else "?")
    if k == "condvar":
        m = b.condvar_mutex
        return ("it must then reacquire mutex 0x%x" % m) if m else \
            "a condition variable has no owner (glibc does not record its mutex)"
    if k == "futex":
        return "no lock layout matches this word; its owner is not recorded"
    if k == "py-lock":
        text = "threading.Lock does not record its owner"
        suspects = lock.get("suspects") or []
        if suspects:
            text += "; %s also reference%s it on the stack" % (
                ", ".join(names(t) for t in suspects), "s" if len(suspects) == 1 else "")
        return text
    if k == "py-condition":
        text = "waits to be notified"
        if lock.get("condition_lock"):
            text += ", then reacquires its %s 0x%x" % (
                {"_thread.RLock": "RLock", "_thread.lock": "Lock"}.get(lock.get("condition_lock_type"), "lock"),
                lock["condition_lock"])
            if lock.get("condition_lock_owner"):
                text += " (now held by %s)" % names(lock["condition_lock_owner"])
        return text
    if not b.owners:
        if k.startswith("rwlock") and lock.get("readers"):
            n = lock["readers"]
            return "read-held by %d thread%s (glibc does not record which)" % (n, "" if n == 1 else "s")
        return "its owner is not recorded"
    if k == "thread-join":
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
    count = lock.get("recursion")
    if count and count > 1:
        text += " (locked %d times)" % count
    return text


def summary(b, names):
    """"waits to write-lock rwlock 0x… (libcuda.so.1): write-held by Thread 8 (LWP 898)"."""
    if b.kind == "thread-join" and b.owners:
        return "waits in pthread_join for %s to exit" % names(b.owners[0])
    verb = VERBS.get(b.kind, "waits on " + b.kind)
    where = ""
    if b.address is not None and b.kind != "gil":
        where = " 0x%x" % b.address
        if b.library:
            where += " (%s)" % _short(b.library)
    line = "%s%s: %s" % (verb, where, owner_text(b, names))
    if b.confidence and b.confidence != "certain":
        line += " [%s]" % b.confidence
    return line


def describe(b, tid, names):
    """One line: "Thread 1 (LWP 885) waits to write-lock rwlock 0x… (libcuda.so.1): write-held by …"."""
    return "%s %s" % (names(tid), summary(b, names))


def finish(b, names):
    """Fill owner_alive and detail once the thread list is known."""
    if b.owners:
        b.owner_alive = all(names.alive(t) for t in b.owners)
    b.detail = summary(b, names)
    return b

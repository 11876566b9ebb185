"""Fork facts across a process tree: what a fork child's hazards mean once
its parent is examined too (plain Python, on the per-process reports; no
gdb, no target).

- orphaned-lock, variant "parent-thread": a fork child's thread waits on a
  lock whose owner TID is not a thread of the child but is one of its
  parent's threads (read from the parent's report: live or from its core).
  That thread held the lock when the parent forked; the child's copy is
  never released.
- orphaned-lock, variant "parent-owner": a fork child's thread waits on an
  RLock whose recorded owner (a pthread_t) is no thread of the child (fork
  zeroes the TID in the descriptors it leaves behind, so the child cannot
  say whose it was).  The parent is asked about the same address, as for
  "parent-reference": when it still has a live RLock there, owned by the
  same pthread_t, which is one of its Python threads, that thread is named:
  certain, both copies record it.  Not for a process-shared lock: its owner may really be
  the parent's thread now, a wait across processes, not a copy.
- orphaned-lock, variant "parent-reference": a fork child's thread waits
  on a threading.Lock that records no owner (the child's own "python-lock"
  hazard).  Fork keeps addresses: the child's lock at address A was the
  parent's object at A.  The tree asks the parent what is at A now
  (lock_objects_wanted, then ProcessEntry.lock_objects: PythonLocks.lock_objects
  in the parent's gdb); when it is a lock of the same type, alive and still
  locked, the parent's threads whose innermost frames reference it (inside
  `with lock:`, or holding it in a variable) are named, as the likely holder
  is named within one process: likely, not certain.  Anything else there
  (freed, reused by another object, unlocked, unreadable) names nobody.
- openmp-after-fork, variant "parent-pool": a fork child's thread is blocked
  inside libgomp and the parent has libgomp's pool threads: the threads the
  child waits for exist only in the parent.
- cow-refcount, variant "children" (live): seen from the parent, the private
  dirty memory (smaps_rollup) of its fork children, when at least one of them
  reads large builtin containers inherited from it (its own cow-refcount).

A tree-level hazard's facts name the PIDs it spans ("processes": the
process, then its parent or its children).  It takes the place, in the tree's list, of the child's own
hazard it explains (same kind, same threads); the child's report keeps its
own.  Every input may be missing (a process not examined, no fork analysis):
then nothing is concluded from it.
"""
from pyhang.libraries import GOMP_LIBRARIES, is_one_of
from pyhang.model.kinds import Confidence, HazardKind, LockFlag, WaitKind
from pyhang.model.report import Hazard
from pyhang.model.hazard_facts import ChildMemory, CowChildrenFacts, ParentOwnerFacts, ParentPoolFacts, \
    ParentReferenceFacts, ParentThread, ParentThreadLockFacts
from pyhang.model.waits import CodeLine

MAX_CHILDREN_LISTED = 16
MAX_CONTAINERS = 5
MAX_LOCK_OBJECTS = 64    # addresses asked of one parent
# The type a lock object at the child's address must have in the parent.
LOCK_TYPES = {WaitKind.PY_LOCK: "_thread.lock", WaitKind.PY_RLOCK: "_thread.RLock"}


def _who(th, references=None):
    """The facts that name a thread of another process in a sentence (and the frame that references a lock)."""
    return ParentThread(tid=th.tid, num=th.gdb_num, name=th.name, python_name=th.python_name, references=references)


def _is_fork_child(entry):
    a = entry.report.fork_analysis if entry.report is not None else None
    return a is not None and a.child


def _checked(entry, what):
    a = entry.report.fork_analysis
    return next((f for w, f in (a.checked if a else ()) if w == what), None)


def _parent_thread_lock(child, parent, hazard):
    """The child's owner-gone lock, its owner a thread of the parent."""
    if hazard.kind != HazardKind.ORPHANED_LOCK or hazard.variant != "owner-gone":
        return None
    f = hazard.facts
    th = child.report.thread(f.thread)
    b = th.blocked_on if th is not None else None
    if b is None or (b.glibc is not None and LockFlag.PSHARED in b.glibc.flags):
        return None
    held = [parent.report.thread(o) for o in f.gone]
    held = [t for t in held if t is not None]
    if not held:
        return None
    facts = ParentThreadLockFacts(thread=f.thread, kind=f.kind, address=f.address, library=f.library,
                                  internal=f.internal, parent_pid=parent.pid, parent_threads=[_who(t) for t in held],
                                  parent_comm=parent.comm, processes=[child.pid, parent.pid])
    return Hazard(HazardKind.ORPHANED_LOCK, list(hazard.threads), Confidence.CERTAIN, "parent-thread", facts)


def _python_lock(hazard):
    """(address, type) of a child's lock that records no owner, or whose
    recorded owner (a pthread_t) is no thread of the child; else None."""
    if hazard.kind != HazardKind.ORPHANED_LOCK or hazard.variant not in ("python-lock", "owner-gone"):
        return None
    f = hazard.facts
    kind = f.kind or WaitKind.PY_LOCK
    if hazard.variant == "owner-gone" and (kind != WaitKind.PY_RLOCK or f.gone or not f.owner_ident):
        return None
    return (f.address, LOCK_TYPES[kind]) if f.address and kind in LOCK_TYPES else None


def lock_objects_wanted(tree):
    """{parent PID: [address]}: the locks recording no owner (or an owner
    that is no thread of theirs) that fork children wait on, to look up in
    their examined parents (at most MAX_LOCK_OBJECTS a parent).  Empty in
    the common tree: no second look."""
    by_pid = {p.pid: p for p in tree.processes if p.report is not None}
    out = {}
    for p in tree.processes:
        parent = by_pid.get(p.parent_pid) if p.report is not None and _is_fork_child(p) else None
        if parent is None:
            continue
        for h in p.report.fork_hazards:
            lock = _python_lock(h)
            if lock:
                out.setdefault(parent.pid, set()).add(lock[0])
    return {pid: sorted(a)[:MAX_LOCK_OBJECTS] for pid, a in out.items()}


def _parent_owner(child, parent, hazard):
    """The child's RLock whose recorded owner is no thread of the child, the
    same object in the parent owned by the same pthread_t, a parent thread."""
    lock = _python_lock(hazard)
    if lock is None or hazard.variant != "owner-gone":
        return None
    address, type_name = lock
    f = hazard.facts
    seen = (parent.lock_objects or {}).get(address)
    if not seen or seen.type_name != type_name or not seen.alive or seen.owner_thread_id != f.owner_ident:
        return None
    th = parent.report.thread(seen.owner_tid)
    if th is None:
        return None
    facts = ParentOwnerFacts(thread=f.thread, kind=f.kind, address=f.address, owner_ident=f.owner_ident,
                             type=type_name, parent_pid=parent.pid, parent_comm=parent.comm,
                             parent_threads=[_who(th)], processes=[child.pid, parent.pid])
    return Hazard(HazardKind.ORPHANED_LOCK, list(hazard.threads), Confidence.CERTAIN, "parent-owner", facts)


def _parent_reference(child, parent, hazard):
    """The child's lock with no owner recorded, the same object locked in
    the parent and referenced by parent threads."""
    lock = _python_lock(hazard)
    if lock is None or hazard.variant != "python-lock":
        return None
    address, type_name = lock
    seen = (parent.lock_objects or {}).get(address)
    if not seen or seen.type_name != type_name or not seen.alive or seen.locked is not True:
        return None
    held = []
    for r in seen.references:
        th = parent.report.thread(r.tid)
        b = th.blocked_on if th is not None else None
        if th is None or (b is not None and b.address == address):   # a parent thread waiting for it too
            continue
        held.append(_who(th, CodeLine(function=r.function, file=r.file, line=r.line)))
    if not held:
        return None
    f = hazard.facts
    facts = ParentReferenceFacts(thread=f.thread, kind=f.kind or WaitKind.PY_LOCK, address=address,
                                 type=type_name, refcount=seen.refcount, parent_pid=parent.pid,
                                 parent_comm=parent.comm, parent_threads=held, processes=[child.pid, parent.pid])
    return Hazard(HazardKind.ORPHANED_LOCK, list(hazard.threads), Confidence.LIKELY, "parent-reference", facts)


def _parent_pool(child, parent, hazard):
    """The child blocked in libgomp, the pool alive in the parent."""
    if hazard.kind != HazardKind.OPENMP_AFTER_FORK or hazard.variant != "" or not hazard.facts.inside:
        return None
    pool = [t for t in parent.report.threads
            if t.tid != parent.pid and any(is_one_of(fr.library, GOMP_LIBRARIES) for fr in t.native_frames)]
    if not pool:
        return None
    facts = ParentPoolFacts(inside=list(hazard.facts.inside), library=hazard.facts.library,
                            parent_pid=parent.pid, parent_comm=parent.comm, parent_threads=[_who(t) for t in pool],
                            pool_in_child=hazard.facts.pool, processes=[child.pid, parent.pid])
    return Hazard(HazardKind.OPENMP_AFTER_FORK, list(hazard.threads), hazard.confidence, "parent-pool", facts)


def _cow_children(parent, children):
    """The parent's fork children copying its memory, seen from it."""
    rows, containers, reading = [], {}, []
    for c in children:
        cow = _checked(c, "cow")
        if not cow or not cow.get("smaps_rollup"):
            continue
        r = cow["smaps_rollup"]
        rows.append(ChildMemory(pid=c.pid, private_dirty_kb=r.get("Private_Dirty", 0),
                                shared_kb=r.get("Shared_Clean", 0) + r.get("Shared_Dirty", 0), rss_kb=r.get("Rss", 0)))
        for h in c.report.fork_hazards:
            if h.kind == HazardKind.COW_REFCOUNT:
                reading.append(c.pid)
                for k in h.facts.containers or ():
                    containers.setdefault(k.address, k)
    if not reading:
        return None
    rows.sort(key=lambda r: -r.private_dirty_kb)
    facts = CowChildrenFacts(
        children=rows[:MAX_CHILDREN_LISTED], children_count=len(rows), reading=sorted(reading),
        private_dirty_kb=sum(r.private_dirty_kb for r in rows),
        containers=sorted(containers.values(), key=lambda k: -k.estimated_bytes)[:MAX_CONTAINERS],
        processes=[parent.pid] + [r.pid for r in rows])
    return Hazard(HazardKind.COW_REFCOUNT, [], Confidence.LIKELY, "children", facts)


def hazards(tree):
    """[(pid, Hazard)]: every process's own fork hazards, those explained by
    the parent replaced by the tree's, then the parents' own."""
    by_pid = {p.pid: p for p in tree.processes if p.report is not None}
    out, parents = [], {}
    for p in tree.processes:
        if p.report is None:
            continue
        parent = by_pid.get(p.parent_pid) if _is_fork_child(p) else None
        if parent is not None:
            parents.setdefault(parent.pid, []).append(p)
        for h in p.report.fork_hazards:
            found = None
            if parent is not None:
                found = (_parent_thread_lock(p, parent, h) or _parent_owner(p, parent, h)
                         or _parent_reference(p, parent, h) or _parent_pool(p, parent, h))
            if found is not None:
                found.facts.forked_by = h.facts.forked_by
            out.append((p.pid, found or h))
    for pid, children in parents.items():
        h = _cow_children(by_pid[pid], children)
        if h is not None:
            out.append((pid, h))
    return out

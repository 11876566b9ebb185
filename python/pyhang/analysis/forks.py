"""fork-hazards: the rules that turn what the target's memory and /proc say
(ProcessSnapshot.fork_facts: a model.fork_facts.ForkFacts) and what the report
found (threads, what each waits on) into fork hazards.

Each rule records the facts it concluded from (model.report.Hazard.facts: the
record of its kind and variant, model.hazard_facts; ForkAnalysis.child_evidence and .checked as (kind, facts) pairs); the
sentences are written by pyhang.render.forks.  Nothing here reads memory;
every input may be missing or partial, and then the rule says less, never
fails.
"""
import os
from operator import attrgetter

from pyhang.analysis import holders
from pyhang.libraries import CUDA_LIBRARIES, GOMP_LIBRARIES, GRPC_LIBRARIES, is_one_of
from pyhang.model.fork_facts import ForkFacts, PythonForkFacts
from pyhang.model.hazard_facts import CowFacts, CudaFacts, GrpcCall, GrpcFacts, InternalLockFacts, OpenmpFacts, \
    OwnerGoneLockFacts, PythonLockFacts, StartMethodChildFacts, StartMethodParentFacts, ThreadsAtForkFacts
from pyhang.model.kinds import Confidence, Forker, HazardKind, PythonStatus, WaitKind
from pyhang.model.record import to_data
from pyhang.model.report import ForkAnalysis, Hazard

COW_MIN_BYTES = 8 << 20   # containers smaller than this are not worth a hazard

_FILE = attrgetter("file")  # of a PythonFrame

_NO_PYTHON = PythonForkFacts()   # what is known of a process without Python facts: nothing


def _lost_threads(facts):
    """Descriptors of threads that were running in the parent at fork."""
    return [d for d in facts.descriptors if not d.exited]


def _started_by(descriptor, prefixes):
    return descriptor.start_routine is not None and is_one_of(descriptor.start_routine.library, prefixes)


def _address_spaces(proc):
    """What /proc says of the process's address space and its parent's (the
    facts of a `proc` child evidence and a `proc-not-child` check)."""
    return {"ppid": proc.ppid, "same": proc.same_address_space, "exe": proc.exe, "parent_exe": proc.parent_exe,
            "mapped": to_data(proc.mapped), "parent_mapped": to_data(proc.parent_mapped),
            "problem": to_data(proc.issue)}


def _child(a, report, proc, py, lost):
    """Is this a fork child that did not exec, and how do we know?"""
    if proc and proc.same_address_space:
        a.child = True
        a.parent_pid = proc.ppid
        ticks = None
        if proc.start_ticks is not None and proc.parent_start_ticks is not None:
            ticks = proc.start_ticks - proc.parent_start_ticks
        a.child_evidence.append(("proc", dict(_address_spaces(proc), ticks_after_parent=ticks)))
    elif proc and proc.ppid > 1:
        a.checked.append(("proc-not-child", _address_spaces(proc)))
    ctype = py.current_process_type
    if ctype and ctype != "_MainProcess":
        a.child = True
        if a.parent_pid is None and py.parent_pid:
            a.parent_pid = py.parent_pid
        a.child_evidence.append(("multiprocessing", {"type": ctype, "name": py.current_process_name,
                                                     "ppid": py.parent_pid}))
    for t in report.threads:
        if not any(file.endswith("popen_fork.py") for file in set(map(_FILE, t.python_frames))):
            continue
        files = [(os.path.basename(f.file), f.function.rsplit(".", 1)[-1]) for f in t.python_frames]
        # the child runs the process's _bootstrap from inside _launch (innermost first: before it); a thread in
        # _launch with no _bootstrap inside it may be the parent's, still in os.fork (its at-fork handlers)
        launch = files.index(("popen_fork.py", "_launch")) if ("popen_fork.py", "_launch") in files else None
        if launch is not None and ("process.py", "_bootstrap") in files[:launch]:
            a.child = True
            a.child_evidence.append(("fork-bootstrap", {"thread": t.tid, "bootstrap": True}))
            break
    if lost:
        a.child = True
        a.child_evidence.append(("descriptors", {"count": len(lost)}))


# Where gunicorn's frames live: the arbiter forks every worker in spawn_worker, whose frame the worker keeps.
GUNICORN_FILES = ("/gunicorn/arbiter.py", "/gunicorn/workers/")


def forked_by(report):
    """Forker.GUNICORN when a thread's Python frames are gunicorn's arbiter
    or worker code (the worker keeps the arbiter's spawn_worker frame it was
    forked in), else Forker.OTHER (multiprocessing's advice, the default)."""
    files = {f.file for t in report.threads for f in t.python_frames if f.file}   # threads share their files
    if any(part in file for file in files for part in GUNICORN_FILES):
        return Forker.GUNICORN
    return Forker.OTHER


def _orphaned_locks(a, report, facts, proc, lost):
    """Locks whose owner is not a thread of this process.  A threading.Lock
    records no owner: one is said held by a parent thread at fork only when
    no thread here references it (no likely holder), some parent thread
    did not survive fork (its descriptor is here), and the lock may have
    existed at fork (not an object a manager's server made on a client's
    request: analysis.holders) — else whoever holds it is not known, and it
    stays a wait of unknown owner (or a holder-exited verdict's)."""
    tids = {t.tid for t in report.threads}
    suspected = {e.waiter for e in report.edges}
    internal = {l.address: l for l in facts.internal_locks}
    parent_threads = set(proc.parent_threads if proc else ())
    for t in report.threads:
        b = t.blocked_on
        if b is None:
            continue
        gone = [o for o in b.owners if o not in tids]
        named = internal.get(b.address)
        if gone:
            f = OwnerGoneLockFacts(thread=t.tid, kind=b.kind, address=b.address, library=b.library, gone=gone,
                                   internal=named, child=a.child)
            if parent_threads:
                f.parent_pid = proc.ppid
                f.in_parent = [o for o in gone if o in parent_threads]
            a.hazards.append(Hazard(HazardKind.ORPHANED_LOCK, [t.tid], Confidence.CERTAIN, "owner-gone", f))
        elif b.python is not None and b.python.owner_gone:
            # The pthread_t it records is a struct pthread: a parent thread's descriptor fork left behind?
            ident = b.python.owner_ident
            a.hazards.append(Hazard(HazardKind.ORPHANED_LOCK, [t.tid], Confidence.CERTAIN, "owner-gone",
                                    OwnerGoneLockFacts(
                                        thread=t.tid, kind=b.kind, address=b.address, library=b.library, gone=[],
                                        owner_ident=ident, internal=named, child=a.child,
                                        descriptor=next((d for d in lost if d.address == ident), None))))
        elif named and a.child:
            a.hazards.append(Hazard(HazardKind.ORPHANED_LOCK, [t.tid], Confidence.LIKELY, "internal-lock",
                                    InternalLockFacts(thread=t.tid, internal=named)))
        elif a.child and b.kind == WaitKind.PY_LOCK and not b.owners and lost and t.tid not in suspected and \
                holders.served_by_manager(t) is None:   # a manager's objects are made after fork
            a.hazards.append(Hazard(HazardKind.ORPHANED_LOCK, [t.tid], Confidence.LIKELY, "python-lock",
                                    PythonLockFacts(thread=t.tid, kind=b.kind, address=b.address, name=b.name,
                                                    lost=len(lost))))
    a.checked.append(("blocked", {"count": sum(1 for t in report.threads if t.blocked_on)}))
    if internal:
        a.checked.append(("internal-locks", {"locks": to_data(list(internal.values()))}))
    elif facts.internal_locks_issue:
        a.problems.append(facts.internal_locks_issue)


def _openmp(a, report, libs, lost):
    gomp = [l for l in libs if is_one_of(l, GOMP_LIBRARIES)]
    if not gomp:
        a.checked.append(("openmp", {"library": None}))
        return
    pool = [d for d in lost if _started_by(d, GOMP_LIBRARIES)]
    inside = [t.tid for t in report.threads if any(is_one_of(f.library, GOMP_LIBRARIES) for f in t.native_frames)]
    if a.child and (pool or inside):
        a.hazards.append(Hazard(HazardKind.OPENMP_AFTER_FORK, inside,
                                Confidence.CERTAIN if pool and inside else Confidence.LIKELY, "",
                                OpenmpFacts(library=gomp[0], pool=len(pool), pool_example=pool[0] if pool else None,
                                            inside=inside)))
    a.checked.append(("openmp", {"library": gomp[0], "child": a.child}))


# gRPC's Python package: a thread with one of its frames is inside a gRPC call (a blocking unary call's
# next_event, a stream's iterator, a future's result).
GRPC_PYTHON = "/grpc/"


def _in_grpc_call(t):
    """The innermost Python frame of `t` in gRPC's package, or None."""
    return next((f for f in t.python_frames if GRPC_PYTHON in (f.file or "")), None)


def _grpc(a, report, libs, lost):
    """gRPC after fork: gRPC's threads (its pollers, executors, timers) were started before fork, so the child
    has none of them, and gRPC's fork handlers are off unless GRPC_ENABLE_FORK_SUPPORT is set: a call the child
    makes waits on a completion queue that the parent's threads drove.  Certain when the child's memory holds
    descriptors of threads gRPC started (they were not copied) and a thread waits inside a gRPC call."""
    grpc = [l for l in libs if is_one_of(l, GRPC_LIBRARIES)]
    if not a.child or not grpc:
        return
    pool = [d for d in lost if _started_by(d, GRPC_LIBRARIES)]
    inside = [(t.tid, _in_grpc_call(t)) for t in report.threads if t.blocked_on is not None]
    inside = [(tid, f) for tid, f in inside if f is not None]
    if pool or inside:
        a.hazards.append(Hazard(HazardKind.GRPC_AFTER_FORK, [tid for tid, _ in inside],
                                Confidence.CERTAIN if pool and inside else Confidence.LIKELY, "",
                                GrpcFacts(library=grpc[0], pool=len(pool), pool_example=pool[0] if pool else None,
                                          inside=[tid for tid, _ in inside],
                                          calls=[GrpcCall(tid=tid, function=f.function, file=f.file, line=f.line)
                                                 for tid, f in inside])))
    a.checked.append(("grpc", {"library": grpc[0], "child": a.child}))


def _cuda(a, libs, py, lost):
    cuda = [l for l in libs if is_one_of(l, CUDA_LIBRARIES)]
    flags = [n for n in ("cuda_initialized", "cuda_in_bad_fork") if getattr(py, n)]
    if a.child and (cuda or flags):
        drivers = [d for d in lost if _started_by(d, CUDA_LIBRARIES)] if cuda else []
        sure = bool(flags) or any(_started_by(d, CUDA_LIBRARIES) for d in lost)
        a.hazards.append(Hazard(HazardKind.CUDA_AFTER_FORK, [], Confidence.CERTAIN if sure else Confidence.LIKELY, "",
                                CudaFacts(library=cuda[0] if cuda else None, drivers=len(drivers),
                                          driver_example=drivers[0] if drivers else None, flags=flags)))
    a.checked.append(("cuda", {"library": cuda[0] if cuda else None, "torch": bool(py.torch),
                               "initialized": py.cuda_initialized, "in_bad_fork": py.cuda_in_bad_fork}))


def _descriptors_read(facts):
    """Whether the child's memory was searched for the descriptors of the threads it was forked with, and
    could be: then none among them that ran at fork means the parent had no other thread then."""
    return facts.mappings_scanned > 0 and not (facts.descriptor_issue or facts.descriptors_issue)


def _threads_at_fork(a, facts, proc, lost):
    """The parent had other threads at fork: certain from the descriptors of those threads in the child's
    memory; likely from the parent's threads now only where those descriptors could not be read (a parent
    that started its threads after the fork has them now)."""
    parent_threads = set(proc.parent_threads if proc else ())
    if a.child and (lost or (len(parent_threads) > 1 and not _descriptors_read(facts))):
        a.hazards.append(Hazard(HazardKind.THREADS_AT_FORK, [], Confidence.CERTAIN if lost else Confidence.LIKELY, "",
                                ThreadsAtForkFacts(lost=list(lost), parent_pid=proc.ppid if proc else None,
                                                   parent_threads=len(parent_threads),
                                                   parent_thread_names=list(proc.parent_thread_names) if proc else [])))
    a.checked.append(("threads-at-fork", {}))


def _start_method(a, report, py, libs):
    ctype = py.current_process_type or ""
    method = py.actual_context or (py.default_context if py.multiprocessing else None)
    if (method and method.startswith("Fork")) or ctype.startswith("Fork"):
        fixed = bool(py.actual_context)
        if not a.child and len(report.threads) > 1:
            a.hazards.append(Hazard(HazardKind.FORK_START_METHOD, sorted(t.tid for t in report.threads),
                                    Confidence.LIKELY, "parent",
                                    StartMethodParentFacts(method=method, fixed=fixed, threads=len(report.threads),
                                                           gomp=any(is_one_of(l, GOMP_LIBRARIES) for l in libs))))
        elif a.child and a.hazards and ctype.startswith("Fork"):
            a.hazards.append(Hazard(HazardKind.FORK_START_METHOD, [], Confidence.CERTAIN, "child",
                                    StartMethodChildFacts(process_type=ctype)))
    a.checked.append(("start-method", {"method": method, "multiprocessing": bool(py.multiprocessing)}))


def _cow(a, proc, py):
    containers = [c for c in py.containers if c.estimated_bytes >= COW_MIN_BYTES]
    if a.child and proc and proc.smaps_rollup:
        rollup = proc.smaps_rollup
        if containers:
            a.hazards.append(Hazard(HazardKind.COW_REFCOUNT, [], Confidence.LIKELY, "",
                                    CowFacts(smaps_rollup=rollup, containers=containers[:5])))
        a.checked.append(("cow", {"smaps_rollup": rollup, "containers": len(containers)}))
    elif containers:
        a.checked.append(("cow-no-smaps", {"containers": len(containers)}))


def is_child(report, facts):
    """Whether analyse() takes the process for a fork child, from the same
    evidence (the collection asks before it reads the large containers)."""
    facts = facts or ForkFacts()
    a = ForkAnalysis()
    _child(a, report, facts.process, facts.python or _NO_PYTHON, _lost_threads(facts))
    return a.child


def analyse(report, facts):
    """The ForkAnalysis of one report, from its ForkFacts."""
    a = ForkAnalysis()
    facts = facts or ForkFacts()
    proc = facts.process
    py = facts.python or _NO_PYTHON
    libs = facts.libraries
    lost = _lost_threads(facts)
    a.problems += [p for p in (facts.descriptor_issue, facts.descriptors_issue, proc.issue if proc else None) if p]
    if report.python_status != PythonStatus.NOT_PYTHON:   # no interpreter: nothing Python-side to miss
        a.problems += list(py.problems)
    _child(a, report, proc, py, lost)
    a.checked.append(("descriptors", {"mappings": facts.mappings_scanned}))
    _orphaned_locks(a, report, facts, proc, lost)
    _openmp(a, report, libs, lost)
    _cuda(a, libs, py, lost)
    _grpc(a, report, libs, lost)
    _threads_at_fork(a, facts, proc, lost)
    _start_method(a, report, py, libs)
    _cow(a, proc, py)
    forker = forked_by(report) if a.hazards else None   # for their advice
    for h in a.hazards:
        h.facts.forked_by = forker
    return a

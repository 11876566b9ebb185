"""fork-hazards: the rules that turn what the target's memory and /proc say
(ProcessSnapshot.fork_facts, from native fork_facts()) and what the report
found (threads, what each waits on) into the report's `fork_hazards` list.

Each hazard is {"kind", "threads", "evidence", "advice", "confidence"}
(docs/json-contract.md); confidence is "certain" or "likely".  Kinds: orphaned-lock,
openmp-after-fork, cuda-after-fork, threads-at-fork, fork-start-method,
cow-refcount.  Nothing here reads memory; every input may be missing or
partial, and then the rule says less, never fails.
"""
import os
from dataclasses import dataclass, field
from typing import List, Optional

from pyhang.render.names import thread_label
from pyhang.libraries import CUDA_LIBRARIES, GOMP_LIBRARIES, PYTHON_LIBRARIES, basename, is_one_of

ADVICE = {
    "orphaned-lock": "start workers with multiprocessing.get_context('spawn') or 'forkserver' "
                     "(or fork before any thread starts): a lock copied while held is never released in the child",
    "openmp-after-fork": "use multiprocessing.get_context('spawn') or 'forkserver', or call torch.set_num_threads(1) "
                         "(OMP_NUM_THREADS=1) in the parent before forking: libgomp's pool does not survive fork",
    "cuda-after-fork": "initialise CUDA only in the children and start them with multiprocessing.get_context('spawn')",
    "threads-at-fork": "fork only while the process has one thread, or use multiprocessing.get_context('spawn') "
                       "or 'forkserver'",
    "fork-start-method": "multiprocessing.get_context('spawn') or 'forkserver' (or set_start_method in __main__)",
    "cow-refcount": "keep large read-only data in numpy arrays, pyarrow or a memmap in /dev/shm instead of Python "
                    "lists/dicts/sets: reading a Python object writes its refcount and copies its page",
}

COW_MIN_BYTES = 8 << 20   # containers smaller than this are not worth a hazard


@dataclass
class Analysis:
    hazards: List[dict] = field(default_factory=list)
    child: bool = False                 # a fork child that did not exec
    child_evidence: List[str] = field(default_factory=list)
    parent_pid: Optional[int] = None
    checked: List[str] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)


def _mb(kb):
    return "%.1f MB" % (kb / 1024.0)


def _who(report, tid):
    th = report.thread(tid)
    return thread_label(th.gdb_num, tid) if th else "LWP %d" % tid


def _hazard(kind, threads, evidence, confidence="certain"):
    return {"kind": kind, "threads": sorted(threads), "evidence": evidence, "advice": ADVICE[kind],
            "confidence": confidence}


def _start_routine_text(d):
    """What a thread ran: its start routine, or which library started it."""
    s = d.get("start_routine") or {}
    lib = basename(s.get("library")) or "?"
    if s.get("function"):
        return "%s (%s)" % (s["function"], lib)
    if lib.startswith(PYTHON_LIBRARIES):
        return "a Python thread (started by %s at 0x%x)" % (lib, s.get("address", 0))
    if lib.startswith(GOMP_LIBRARIES):
        return "an OpenMP pool thread (started by %s at 0x%x)" % (lib, s.get("address", 0))
    return "a thread started at 0x%x (%s)" % (s.get("address", 0), lib)


def _lost_threads(facts):
    """Descriptors of threads that were running in the parent at fork."""
    return [d for d in facts.get("descriptors") or [] if not d.get("exited")]


def analyse(report, facts):
    """The fork hazards of one report, from native.fork_facts()."""
    a = Analysis()
    facts = facts or {}
    proc = facts.get("process") or None
    py = facts.get("python") or {}
    libs = facts.get("libraries") or []
    tids = {t.tid for t in report.threads}
    lost = _lost_threads(facts)
    a.problems += [p for p in (facts.get("descriptor_problem"), (proc or {}).get("problem")) if p]
    a.problems += [p for p in py.get("problems") or [] if "not-python" not in p]

    # --- is this a fork child that did not exec, and how do we know?
    if proc and proc.get("same_address_space"):
        a.child = True
        a.parent_pid = proc["ppid"]
        started = ""
        if proc.get("start_ticks") is not None and proc.get("parent_start_ticks") is not None:
            started = "; started %d clock ticks after its parent" % (proc["start_ticks"] - proc["parent_start_ticks"])
        a.child_evidence.append("/proc: parent PID %d; %s%s" % (proc["ppid"], proc["address_space_evidence"], started))
    elif proc and proc.get("ppid", 0) > 1:
        a.checked.append("/proc: parent PID %d does not share this address space (%s)" % (
            proc["ppid"], proc.get("address_space_evidence") or proc.get("problem") or "unknown"))
    ctype = py.get("current_process_type")
    if ctype and ctype != "_MainProcess":
        a.child = True
        if a.parent_pid is None and py.get("parent_pid"):
            a.parent_pid = py["parent_pid"]
        a.child_evidence.append("Python: multiprocessing.process._current_process is a %s%s, parent PID %s" % (
            ctype, " named %r" % py["current_process_name"] if py.get("current_process_name") else "",
            py.get("parent_pid")))
    for t in report.threads:
        if not any(f.file.endswith("popen_fork.py") for f in t.python_frames):
            continue
        files = [(os.path.basename(f.file), f.function.rsplit(".", 1)[-1]) for f in t.python_frames]
        if ("popen_fork.py", "_launch") in files:
            a.child = True
            a.child_evidence.append("Python: %s runs multiprocessing's fork bootstrap (popen_fork.py _launch%s)" % (
                _who(report, t.tid), " → process.py _bootstrap" if ("process.py", "_bootstrap") in files else ""))
            break
    if lost:
        a.child = True
        a.child_evidence.append("memory: %d thread descriptor%s of threads that are not in this process and did not "
                                "end by themselves (glibc keeps the stacks fork copied)" % (
                                    len(lost), "" if len(lost) == 1 else "s"))
    a.checked.append("thread descriptors left by fork (%d anonymous mappings scanned)" % facts.get("mappings_scanned", 0))

    # --- orphaned locks: an owner that is not a thread of this process
    internal = {l["address"]: l for l in facts.get("internal_locks") or []}
    parent_threads = set((proc or {}).get("parent_threads") or [])
    for t in report.threads:
        b = t.blocked_on
        if b is None:
            continue
        gone = [o for o in b.owners if o not in tids]
        named = internal.get(b.address)
        if gone:
            ev = "%s waits on %s 0x%x%s; its owner LWP %s is not a thread of this process" % (
                _who(report, t.tid), b.kind, b.address or 0, " (%s)" % basename(b.library) if b.library else "",
                ", ".join(str(o) for o in gone))
            if parent_threads:
                inherited = [o for o in gone if o in parent_threads]
                if inherited:
                    ev += "; LWP %s is a thread of the parent PID %d: the lock was held there at fork and copied " \
                          "locked" % (", ".join(map(str, inherited)), proc["ppid"])
                else:
                    ev += "; nor of the parent PID %d (it exited, or the lock came from an older fork)" % proc["ppid"]
            elif a.child:
                ev += " (this is a fork child: the lock was copied while a parent thread held it)"
            if named:
                ev += "; the lock is glibc's %s (%s)" % (named["name"], named["how"])
            a.hazards.append(_hazard("orphaned-lock", [t.tid], ev))
        elif named and a.child:
            a.hazards.append(_hazard("orphaned-lock", [t.tid], (
                "%s waits on glibc's %s at 0x%x (%s), which fork does not reset; glibc records no owner of it: "
                "a parent thread held it at fork") % (_who(report, t.tid), named["name"], named["address"],
                                                        named["how"]), "likely"))
        elif a.child and b.kind == "py-lock" and not b.owners:
            a.hazards.append(_hazard("orphaned-lock", [t.tid], (
                "%s waits on threading.Lock 0x%x; a Lock records no owner, and no other thread of this fork "
                "child references it: most likely a parent thread held it at fork%s") % (
                    _who(report, t.tid), (b.lock or {}).get("object") or b.address or 0,
                    "" if not lost else " (%d parent thread%s did not survive fork)" % (
                        len(lost), "" if len(lost) == 1 else "s")), "likely"))
    a.checked.append("owners of the locks threads wait on (%d blocked)" % sum(1 for t in report.threads if t.blocked_on))
    if internal:
        a.checked.append("glibc-internal locks fork does not reset: %s" % ", ".join(
            "%s at 0x%x" % (l["name"], l["address"]) for l in internal.values()))
    elif facts.get("internal_locks_problem"):
        a.problems.append(facts["internal_locks_problem"])

    # --- OpenMP
    gomp = [l for l in libs if is_one_of(l, GOMP_LIBRARIES)]
    if gomp:
        pool = [d for d in lost if is_one_of((d.get("start_routine") or {}).get("library"), GOMP_LIBRARIES)]
        inside = [t.tid for t in report.threads if any(is_one_of(f.library, GOMP_LIBRARIES) for f in t.native_frames)]
        if a.child and (pool or inside):
            parts = ["%s is loaded" % gomp[0]]
            if pool:
                parts.append("its thread pool was started before fork: %d pool thread%s (%s) ran in the parent and "
                             "%s not copied" % (len(pool), "" if len(pool) == 1 else "s", _start_routine_text(pool[0]),
                                                 "was" if len(pool) == 1 else "were"))
            if inside:
                parts.append("%s %s blocked inside libgomp, waiting for pool threads that do not exist here" % (
                    ", ".join(_who(report, x) for x in inside), "is" if len(inside) == 1 else "are"))
            else:
                parts.append("no thread is inside libgomp yet: the next parallel region will wait forever")
            a.hazards.append(_hazard("openmp-after-fork", inside, "; ".join(parts),
                                     "certain" if pool and inside else "likely"))
        a.checked.append("OpenMP: %s loaded%s" % (basename(gomp[0]), "" if a.child else " (not a fork child)"))
    else:
        a.checked.append("OpenMP: libgomp not loaded")

    # --- CUDA
    cuda = [l for l in libs if is_one_of(l, CUDA_LIBRARIES)]
    flags = [n for n in ("cuda_initialized", "cuda_in_bad_fork") if py.get(n)]
    if a.child and (cuda or flags):
        parts = []
        if cuda:
            parts.append("CUDA library %s is mapped in this fork child" % cuda[0])
            drv = [d for d in lost if is_one_of((d.get("start_routine") or {}).get("library"), CUDA_LIBRARIES)]
            if drv:
                parts.append("%d of its threads (%s) ran in the parent: CUDA was initialised before fork" % (
                    len(drv), _start_routine_text(drv[0])))
        if flags:
            parts.append("torch.cuda says %s" % " and ".join("%s = True" % ("_initialized" if f == "cuda_initialized"
                                                                         else "_in_bad_fork") for f in flags))
        sure = bool(flags) or any(is_one_of((d.get("start_routine") or {}).get("library"), CUDA_LIBRARIES) for d in lost)
        a.hazards.append(_hazard("cuda-after-fork", [], "; ".join(parts), "certain" if sure else "likely"))
    a.checked.append("CUDA: %s" % ("%s mapped" % basename(cuda[0]) if cuda else "no CUDA library mapped") +
                     ("" if not py.get("torch") else ", torch.cuda _initialized=%s _in_bad_fork=%s" % (
                         py.get("cuda_initialized"), py.get("cuda_in_bad_fork"))))

    # --- threads at fork
    if a.child and (lost or len(parent_threads) > 1):
        parts = []
        if lost:
            by = {}
            for d in lost:
                by.setdefault(_start_routine_text(d), []).append(d)
            parts.append("this child's memory holds %d descriptor%s of parent threads that fork did not copy: %s" % (
                len(lost), "" if len(lost) == 1 else "s",
                ", ".join("%d × %s" % (len(v), k) for k, v in sorted(by.items()))))
        if len(parent_threads) > 1:
            names = (proc or {}).get("parent_thread_names") or []
            parts.append("live: the parent PID %d has %d threads now (%s)" % (
                proc["ppid"], len(parent_threads), ", ".join(sorted(set(n for n in names if n))) or "?"))
        a.hazards.append(_hazard("threads-at-fork", [], "; ".join(parts), "certain" if lost else "likely"))
    a.checked.append("threads of the parent at fork")

    # --- fork start method
    method = py.get("actual_context") or (py.get("default_context") if py.get("multiprocessing") else None)
    is_fork = bool(method) and method.startswith("Fork")
    if is_fork or (ctype or "").startswith("Fork"):
        fixed = "fixed" if py.get("actual_context") else "the platform default, not set explicitly"
        if not a.child and len(report.threads) > 1:
            a.hazards.append(_hazard("fork-start-method", sorted(tids), (
                "multiprocessing's start method is fork (%s: %s) and this process has %d threads: every child it "
                "forks inherits their locks and state but not the threads%s") % (
                    method, fixed, len(report.threads),
                    "; libgomp is loaded" if gomp else ""), "likely"))
        elif a.child and a.hazards and (ctype or "").startswith("Fork"):
            a.hazards.append(_hazard("fork-start-method", [], (
                "this child was started by multiprocessing with the fork start method (%s)" % (
                    ctype if (ctype or "").startswith("Fork") else "%s, %s" % (method, fixed)))))
    a.checked.append("multiprocessing start method: %s" % (method or ("multiprocessing not imported"
                                                                     if not py.get("multiprocessing") else "unknown")))

    # --- copy-on-write of refcounts (live)
    containers = [c for c in py.get("containers") or [] if c.get("estimated_bytes", 0) >= COW_MIN_BYTES]
    if a.child and proc and (proc.get("smaps_rollup") or {}):
        r = proc["smaps_rollup"]
        if containers:
            big = "; ".join("%s: %s of %d items, ~%s with its items (at 0x%x, inherited from the parent)" % (
                c["where"], c["type"], c["length"], _mb(c["estimated_bytes"] / 1024.0), c["address"])
                for c in containers[:5])
            ev = ("smaps_rollup: Private_Dirty %s (copied or written by this child) against Shared %s still shared "
                  "(Rss %s, Pss %s); large builtin containers this child reads copy the pages they live in: %s") % (
                _mb(r.get("Private_Dirty", 0)), _mb(r.get("Shared_Clean", 0) + r.get("Shared_Dirty", 0)),
                _mb(r.get("Rss", 0)), _mb(r.get("Pss", 0)), big)
            a.hazards.append(_hazard("cow-refcount", [], ev, "likely"))
        a.checked.append("copy-on-write: Private_Dirty %s, shared %s, %d large container%s" % (
            _mb(r.get("Private_Dirty", 0)), _mb(r.get("Shared_Clean", 0) + r.get("Shared_Dirty", 0)),
            len(containers), "" if len(containers) == 1 else "s"))
    elif containers:
        a.checked.append("copy-on-write: %d large container%s (smaps needs a live fork child)" % (
            len(containers), "" if len(containers) == 1 else "s"))
    return a



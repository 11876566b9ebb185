"""The sentences of fork hazards: each hazard's evidence and advice (also
the JSON `fork_hazards` entries), and the text of the fork-hazards command."""
from pyhang.libraries import GOMP_LIBRARIES, PYTHON_LIBRARIES, basename
from pyhang.model.fork_facts import CodeAddress
from pyhang.model.kinds import ForkProblem, Forker, HazardKind, LockFound, ReaderFailure
from pyhang.model.record import to_data
from pyhang.model.unread import ReadProblem
from pyhang.model.waits import DescriptorsIssue
from pyhang.render.glibc import descriptors_text
from pyhang.render.target import reader_failure
from pyhang.render.names import ThreadNames, lock_reference, object_name, thread_title
from pyhang.render.unread import unread_text

ADVICE = {
    HazardKind.ORPHANED_LOCK: "start workers with multiprocessing.get_context('spawn') or 'forkserver' "
                              "(or fork before any thread starts): a lock copied while held is never released in "
                              "the child",
    HazardKind.OPENMP_AFTER_FORK: "use multiprocessing.get_context('spawn') or 'forkserver', or call "
                                  "torch.set_num_threads(1) (OMP_NUM_THREADS=1) in the parent before forking: "
                                  "libgomp's pool does not survive fork",
    HazardKind.GRPC_AFTER_FORK: "create gRPC servers and channels only after fork (in the child), start the worker "
                                "with multiprocessing.get_context('spawn') or 'forkserver', or set "
                                "GRPC_ENABLE_FORK_SUPPORT=1 before gRPC starts (its fork handlers then stop and "
                                "restart gRPC's threads around fork)",
    HazardKind.CUDA_AFTER_FORK: "initialise CUDA only in the children and start them with "
                                "multiprocessing.get_context('spawn')",
    HazardKind.THREADS_AT_FORK: "fork only while the process has one thread, or use "
                                "multiprocessing.get_context('spawn') or 'forkserver'",
    HazardKind.FORK_START_METHOD: "multiprocessing.get_context('spawn') or 'forkserver' (or set_start_method in "
                                  "__main__)",
    HazardKind.COW_REFCOUNT: "keep large read-only data in numpy arrays, pyarrow or a memmap in /dev/shm instead of "
                             "Python lists/dicts/sets: reading a Python object writes its refcount and copies its page",
}


# What to change where the frames show who forked (a hazard's facts' "forked_by", analysis.forks.forked_by).
FORKER_ADVICE = {
    (Forker.GUNICORN, HazardKind.ORPHANED_LOCK):
        "with --preload gunicorn imports the application once, in the arbiter, and forks every worker from it: do "
        "not start threads or take locks at import; start them in each worker (a post_fork hook in the gunicorn "
        "config) or drop --preload: a lock copied while held is never released in the worker",
    (Forker.GUNICORN, HazardKind.THREADS_AT_FORK):
        "with --preload the arbiter forks every worker after importing the application: start no thread at import; "
        "start it in each worker from a post_fork hook, or drop --preload",
}


# What each kind of hazard is, in a few words (a tree's line for a hazard of one process, a picture's box).
HAZARD_TITLES = {
    HazardKind.ORPHANED_LOCK: "a lock was copied locked by fork",
    HazardKind.OPENMP_AFTER_FORK: "OpenMP's threads were started before fork",
    HazardKind.GRPC_AFTER_FORK: "gRPC's threads were started before fork",
    HazardKind.CUDA_AFTER_FORK: "CUDA was initialised before fork",
    HazardKind.THREADS_AT_FORK: "the process had other threads when it was forked",
    HazardKind.FORK_START_METHOD: "multiprocessing starts its processes with fork while threads run",
    HazardKind.COW_REFCOUNT: "children copy the memory they inherited by only reading its objects",
}


def hazard_title(h):
    """What hazard `h` is, in a few words, and whether it is a hang or a risk."""
    return "%s (%s)" % (HAZARD_TITLES[h.kind], "a hang" if h.hangs else "a risk, not a hang by itself")


def advice(h):
    """The advice of hazard `h`: for who forked it where that changes the fix, else its kind's."""
    return FORKER_ADVICE.get((h.facts.forked_by, h.kind)) or ADVICE[h.kind]


# threading's names of the lock types (LockObject.type_name).
_LOCK_NAMES = {"_thread.lock": "Lock", "_thread.RLock": "RLock"}


def _mb(kb):
    return "%.1f MB" % (kb / 1024.0)


def _s(n):
    return "" if n == 1 else "s"


_NO_START = CodeAddress()   # a descriptor's start routine not known: no function, no library, at 0


def _start_routine(d):
    """What a thread ran (`d`, its ThreadDescriptor, or None): its start routine, or which library started it."""
    s = (d.start_routine if d is not None else None) or _NO_START
    lib = basename(s.library) or "?"
    if s.function:
        return "%s (%s)" % (s.function, lib)
    if lib.startswith(PYTHON_LIBRARIES):
        return "a Python thread (started by %s at 0x%x)" % (lib, s.address)
    if lib.startswith(GOMP_LIBRARIES):
        return "an OpenMP pool thread (started by %s at 0x%x)" % (lib, s.address)
    return "a thread started at 0x%x (%s)" % (s.address, lib)


def _title(t):
    """A parent thread a tree-level hazard names (a ParentThread), as a sentence names a thread."""
    return thread_title(t.num, t.tid, t.name, t.python_name)


def _parent_threads(f):
    """The parent's threads a tree-level hazard names."""
    return ", ".join(map(_title, f.parent_threads))


def _parent(f):
    return "PID %d%s" % (f.parent_pid, " (%s)" % f.parent_comm if f.parent_comm else "")


def _orphaned_lock(h, f, names):
    if h.variant == "parent-thread":
        owners = f.parent_threads
        return ("%s waits on %s 0x%x%s; its owner LWP %s is not alive in this process: %s %s of the parent %s, "
                "which held the lock when the parent forked: the copy here is locked by a thread that does not "
                "exist in this child%s") % (
                    names(f.thread), f.kind, f.address or 0,
                    " (%s)" % basename(f.library) if f.library else "",
                    ", ".join(str(t.tid) for t in owners), "it is" if len(owners) == 1 else "they are",
                    _parent_threads(f), _parent(f),
                    "; the lock is glibc's %s" % f.internal.name if f.internal else "")
    if h.variant == "parent-owner":
        return ("%s waits on threading.%s 0x%x; its owner pthread_t 0x%x is no thread of this process: in the "
                "parent %s the same %s (fork keeps addresses) is still owned by pthread_t 0x%x, which is %s, so that "
                "thread held it when the parent forked: the copy here is never released") % (
                    names(f.thread), _LOCK_NAMES.get(f.type, f.type), f.address, f.owner_ident,
                    _parent(f), _LOCK_NAMES.get(f.type, f.type), f.owner_ident, _parent_threads(f))
    if h.variant == "parent-reference":
        held = f.parent_threads
        return ("%s waits on threading.%s 0x%x, which records no owner; fork keeps addresses, and in the parent %s "
                "the object at 0x%x is still a locked threading.%s (refcount %s): %s. %s held the lock when the "
                "parent forked, most likely: the copy here is never released") % (
                    names(f.thread), _LOCK_NAMES.get(f.type, f.type), f.address, _parent(f),
                    f.address, _LOCK_NAMES.get(f.type, f.type), f.refcount,
                    "; ".join("%s %s" % (_title(t), lock_reference(t.references)) for t in held),
                    "It" if len(held) == 1 else "One of them")
    if h.variant == "internal-lock":
        i = f.internal
        return ("%s waits on glibc's %s at 0x%x (%s), which fork does not reset; glibc records no owner of it: "
                "a parent thread held it at fork") % (names(f.thread), i.name, i.address, _found(i))
    if h.variant == "python-lock":
        return ("%s waits on threading.Lock 0x%x%s; a Lock records no owner, and no other thread of this fork "
                "child references it: most likely a parent thread held it at fork%s") % (
                    names(f.thread), f.address or 0, " (%s)" % object_name(f.name) if f.name else "",
                    "" if not f.lost else " (%d parent thread%s did not survive fork)" % (f.lost, _s(f.lost)))
    owner = "LWP %s" % ", ".join(str(o) for o in f.gone) if f.gone else \
        "pthread_t 0x%x" % (f.owner_ident or 0)
    ev = "%s waits on %s 0x%x%s; its owner %s is not a thread of this process" % (
        names(f.thread), f.kind, f.address or 0, " (%s)" % basename(f.library) if f.library else "",
        owner)
    if f.descriptor:
        ev += "; it is the descriptor of a parent thread that fork did not copy, %s: that thread held the lock " \
              "at fork" % _start_routine(f.descriptor)
    elif f.in_parent is not None:   # the parent's threads were read
        if f.in_parent:
            ev += "; LWP %s is a thread of the parent PID %d: the lock was held there at fork and copied " \
                  "locked" % (", ".join(map(str, f.in_parent)), f.parent_pid)
        else:
            ev += "; nor of the parent PID %d (it exited, or the lock came from an older fork)" % f.parent_pid
    elif f.child:
        ev += " (this is a fork child: the lock was copied while a parent thread held it)"
    if f.internal:
        ev += "; the lock is glibc's %s (%s)" % (f.internal.name, _found(f.internal))
    return ev


def _openmp(h, f, names):
    if h.variant == "parent-pool":
        pool = f.parent_threads
        return ("%s %s blocked inside %s waiting for the OpenMP pool's threads; they exist only in the parent %s, "
                "where %d pool thread%s %s alive (%s): their owner is not alive in this child, which has none of "
                "them%s") % (
                    ", ".join(names(x) for x in f.inside), "is" if len(f.inside) == 1 else "are",
                    basename(f.library) or "libgomp", _parent(f), len(pool), _s(len(pool)),
                    "is" if len(pool) == 1 else "are", _parent_threads(f),
                    "" if not f.pool_in_child else " (its memory still holds %d of their descriptors)" %
                    f.pool_in_child)
    parts = ["%s is loaded" % f.library]
    if f.pool:
        parts.append("its thread pool was started before fork: %d pool thread%s (%s) ran in the parent and "
                     "%s not copied" % (f.pool, _s(f.pool), _start_routine(f.pool_example),
                                        "was" if f.pool == 1 else "were"))
    inside = f.inside
    if inside:
        parts.append("%s %s blocked inside libgomp, waiting for pool threads that do not exist here" % (
            ", ".join(names(x) for x in inside), "is" if len(inside) == 1 else "are"))
    else:
        parts.append("no thread is inside libgomp yet: the next parallel region will wait forever")
    return "; ".join(parts)


def _grpc(h, f, names):
    parts = ["%s is loaded" % f.library]
    if f.pool:
        parts.append("gRPC's threads were started before fork: %d of them (%s) ran in the parent and %s not copied"
                     % (f.pool, _start_routine(f.pool_example), "was" if f.pool == 1 else "were"))
    calls = f.calls or []
    if calls:
        parts.append("; ".join("%s waits in a gRPC call (File \"%s\", line %s, in %s) on a completion queue the "
                               "parent's gRPC threads drove: nothing in this child completes it" % (
                                   names(c.tid), c.file, c.line, c.function) for c in calls))
    else:
        parts.append("no thread is inside a gRPC call yet: the next call may wait forever")
    return "; ".join(parts)


def _cuda(h, f, names):
    parts = []
    if f.library:
        parts.append("CUDA library %s is mapped in this fork child" % f.library)
        if f.drivers:
            parts.append("%d of its threads (%s) ran in the parent: CUDA was initialised before fork" % (
                f.drivers, _start_routine(f.driver_example)))
    if f.flags:
        parts.append("torch.cuda says %s" % " and ".join(
            "%s = True" % ("_initialized" if flag == "cuda_initialized" else "_in_bad_fork") for flag in f.flags))
    return "; ".join(parts)


def _threads_at_fork(h, f, names):
    parts = []
    lost = f.lost
    if lost:
        by = {}
        for d in lost:
            by.setdefault(_start_routine(d), []).append(d)
        parts.append("this child's memory holds %d descriptor%s of parent threads that fork did not copy: %s" % (
            len(lost), _s(len(lost)), ", ".join("%d × %s" % (len(v), k) for k, v in sorted(by.items()))))
    if f.parent_threads > 1:
        parts.append("live: the parent PID %d has %d threads now (%s)" % (
            f.parent_pid, f.parent_threads, ", ".join(sorted(set(n for n in f.parent_thread_names if n)))
            or "?"))
    return "; ".join(parts)


def _start_method(h, f, names):
    if h.variant == "child":
        return "this child was started by multiprocessing with the fork start method (%s)" % f.process_type
    fixed = "fixed" if f.fixed else "the platform default, not set explicitly"
    return ("multiprocessing's start method is fork (%s: %s) and this process has %d threads: every child it "
            "forks inherits their locks and state but not the threads%s") % (
                f.method, fixed, f.threads, "; libgomp is loaded" if f.gomp else "")


def _rollup(r):
    return _mb(r.get("Private_Dirty", 0)), _mb(r.get("Shared_Clean", 0) + r.get("Shared_Dirty", 0))


def _cow_children(f):
    rows = f.children
    listed = ", ".join("PID %d %s (shares %s)" % (r.pid, _mb(r.private_dirty_kb), _mb(r.shared_kb)) for r in rows)
    more = f.children_count - len(rows)
    big = "; ".join("%s: %s of %d items, ~%s" % (c.where, c.type, c.length, _mb(c.estimated_bytes / 1024.0))
                    for c in f.containers)
    return ("%d fork child%s of this process hold%s %s of private dirty memory, copied from it or written since "
            "fork (smaps_rollup Private_Dirty: %s%s); "
            "%s read%s large builtin containers inherited from this process, and every read copies the page it "
            "touches: %s") % (
                f.children_count, "" if f.children_count == 1 else "ren",
                "s" if f.children_count == 1 else "", _mb(f.private_dirty_kb), listed,
                "" if more <= 0 else ", and %d more" % more,
                ", ".join("PID %d" % pid for pid in f.reading), "s" if len(f.reading) == 1 else "",
                big)


def _cow(h, f, names):
    if h.variant == "children":
        return _cow_children(f)
    r = f.smaps_rollup
    big = "; ".join("%s: %s of %d items, ~%s with its items (at 0x%x, inherited from the parent)" % (
        c.where, c.type, c.length, _mb(c.estimated_bytes / 1024.0), c.address) for c in f.containers)
    dirty, shared = _rollup(r)
    return ("smaps_rollup: Private_Dirty %s (copied or written by this child) against Shared %s still shared "
            "(Rss %s, Pss %s); large builtin containers this child reads copy the pages they live in: %s") % (
        dirty, shared, _mb(r.get("Rss", 0)), _mb(r.get("Pss", 0)), big)


_EVIDENCE = {
    HazardKind.ORPHANED_LOCK: _orphaned_lock,
    HazardKind.OPENMP_AFTER_FORK: _openmp,
    HazardKind.GRPC_AFTER_FORK: _grpc,
    HazardKind.CUDA_AFTER_FORK: _cuda,
    HazardKind.THREADS_AT_FORK: _threads_at_fork,
    HazardKind.FORK_START_METHOD: _start_method,
    HazardKind.COW_REFCOUNT: _cow,
}


def evidence(h, names):
    return _EVIDENCE[h.kind](h, h.facts, names)


def hazard_advice(h, report=None):
    """The advice of hazard `h`; in a fork child's own report (`report`, not
    a tree's view of it), an orphaned lock's also names the look at the
    parent that says which of its threads held the lock."""
    text = advice(h)
    analysis = report.fork_analysis if report is not None else None
    if h.kind != HazardKind.ORPHANED_LOCK or h.facts.processes or analysis is None or not analysis.parent_pid:
        return text
    if report.target.kind == "core":
        return text + "; `pyhang report CHILD.core PARENT.core` (a core of the parent PID %d too) says which " \
                      "parent thread held it" % analysis.parent_pid
    return text + "; `pyhang report --tree -p %d` asks the parent which of its threads held it" % analysis.parent_pid


def hazard_json(h, names, report=None):
    """A `fork_hazards` entry of the JSON document (`report`: the process's own, for hazard_advice)."""
    return {"kind": h.kind, "threads": list(h.threads), "evidence": evidence(h, names),
            "advice": hazard_advice(h, report), "confidence": h.confidence}


# What a fork fact could not be read for (kinds.ForkProblem), worded with
# the issue's number, other and text.
_FORK_PROBLEMS = {
    ForkProblem.UNEXPECTED_TID_DESCRIPTOR: lambda i: "unexpected _thread_db_pthread_tid descriptor in " + i["text"],
    ForkProblem.TOO_MANY_MAPPINGS: lambda i: "more than %d candidate mappings; the rest not scanned" % i["number"],
    ForkProblem.MAPPINGS_UNKNOWN: lambda i: "the target's memory mappings are unknown",
    ForkProblem.NO_LIBC: lambda i: "libc is not mapped or cannot be opened",
    ForkProblem.NO_CXA_FINALIZE: lambda i: "__exit_funcs_lock: no symbol, and no __cxa_finalize in %s to decode it "
                                           "from" % i["text"],
    ForkProblem.CXA_FINALIZE_UNDECODED: lambda i: "__exit_funcs_lock: hidden in %s (no symbol), and __cxa_finalize's "
                                                  "code has no lea/lock cmpxchg pair to find it by" % i["text"],
    ForkProblem.DECODED_NOT_DATA: lambda i: "__exit_funcs_lock: the address decoded from __cxa_finalize (0x%x) is "
                                            "not in libc's data" % i["number"],
    ForkProblem.NO_EXECUTABLES: lambda i: "cannot read the executables of %d and its parent %d" % (
        i["number"], i["other"]),
    ForkProblem.MAPS_UNREADABLE: lambda i: (reader_failure(ReaderFailure.MAPS_UNREADABLE, i["text"])
                                            if i["text"].startswith("/") else "maps: " + i["text"]),
    ForkProblem.NO_STAT: lambda i: "cannot read /proc/%d/stat" % i["number"],
    ForkProblem.READER_ERROR: lambda i: (reader_failure(i["reason"], i["text"], i["number"]) if i.get("reason")
                                         else i["text"]),
}


def fork_problem(p):
    """What a fork fact could not be read for: a ForkIssue (or its data), why
    nptl's descriptors are not known (DescriptorsIssue), what of the Python
    state could not be read (ReadProblem)."""
    if isinstance(p, ReadProblem) or (isinstance(p, dict) and "why" in p):
        return unread_text(p)
    if isinstance(p, DescriptorsIssue):
        return descriptors_text(p)
    if not isinstance(p, dict):
        p = to_data(p)
    words = _FORK_PROBLEMS.get(p.get("kind"))
    try:
        return words(p) if words else "%s (%s)" % (p.get("kind"), p.get("text") or p.get("number"))
    except (KeyError, TypeError, ValueError):   # data another pyhang wrote, or damaged
        return "%s (%s)" % (p.get("kind"), p.get("text") or p.get("number"))


def _found(lock):
    """How a glibc-internal lock's address was found (fork facts' InternalLock)."""
    if lock.found == LockFound.CXA_FINALIZE_CODE:
        return ("decoded from __cxa_finalize's code (the lock its inlined __libc_lock_lock takes); the symbol is "
                "hidden in %s" % basename(lock.library))
    return "symbol %s of %s" % (lock.name, lock.library)


def _address_spaces(f):
    """Whether a process's address space is its parent's copy, in the words
    of the starts it was decided from (`proc` evidence, `proc-not-child`)."""
    mine, theirs = f.get("mapped"), f.get("parent_mapped")
    if not mine or not theirs:
        return fork_problem(f["problem"]) if f.get("problem") else "unknown"
    if f["same"]:
        return ("same executable %s, mapped at 0x%x, libc at 0x%x%s as in the parent: the address space is the "
                "parent's copy (exec would re-randomise it)") % (
                    f["exe"], mine["exe"], mine["libc"], " and heap at 0x%x" % mine["heap"] if mine["heap"] else "")
    return "executable %s at 0x%x, libc at 0x%x; parent %s at 0x%x, libc at 0x%x" % (
        f["exe"], mine["exe"], mine["libc"], f["parent_exe"], theirs["exe"], theirs["libc"])


def child_evidence(what, f, names):
    if what == "proc":
        started = "" if f["ticks_after_parent"] is None else \
            "; started %d clock ticks after its parent" % f["ticks_after_parent"]
        return "/proc: parent PID %d; %s%s" % (f["ppid"], _address_spaces(f), started)
    if what == "multiprocessing":
        return "Python: multiprocessing.process._current_process is a %s%s, parent PID %s" % (
            f["type"], " named %r" % f["name"] if f["name"] else "", f["ppid"])
    if what == "fork-bootstrap":
        return "Python: %s runs multiprocessing's fork bootstrap (popen_fork.py _launch%s)" % (
            names(f["thread"]), " → process.py _bootstrap" if f["bootstrap"] else "")
    if what == "descriptors":
        return ("memory: %d thread descriptor%s of threads that are not in this process and did not end by "
                "themselves (glibc keeps the stacks fork copied)" % (f["count"], _s(f["count"])))
    return what


def checked(what, f):
    if what == "proc-not-child":
        return "/proc: parent PID %d does not share this address space (%s)" % (f["ppid"], _address_spaces(f))
    if what == "descriptors":
        return "thread descriptors left by fork (%d anonymous mappings scanned)" % f["mappings"]
    if what == "blocked":
        return "owners of the locks threads wait on (%d blocked)" % f["count"]
    if what == "internal-locks":
        return "glibc-internal locks fork does not reset: %s" % ", ".join(
            "%s at 0x%x" % (l["name"], l["address"]) for l in f["locks"])
    if what == "openmp":
        if not f["library"]:
            return "OpenMP: libgomp not loaded"
        return "OpenMP: %s loaded%s" % (basename(f["library"]), "" if f["child"] else " (not a fork child)")
    if what == "cuda":
        return "CUDA: %s" % ("%s mapped" % basename(f["library"]) if f["library"] else "no CUDA library mapped") + (
            "" if not f["torch"] else ", torch.cuda _initialized=%s _in_bad_fork=%s" % (
                f["initialized"], f["in_bad_fork"]))
    if what == "threads-at-fork":
        return "threads of the parent at fork"
    if what == "start-method":
        return "multiprocessing start method: %s" % (
            f["method"] or ("multiprocessing not imported" if not f["multiprocessing"] else "unknown"))
    if what == "cow":
        dirty, shared = _rollup(f["smaps_rollup"])
        return "copy-on-write: Private_Dirty %s, shared %s, %d large container%s" % (
            dirty, shared, f["containers"], _s(f["containers"]))
    if what == "cow-no-smaps":
        return "copy-on-write: %d large container%s (smaps needs a live fork child)" % (
            f["containers"], _s(f["containers"]))
    return what


def render_fork_hazards(report, analysis):
    """The text of the fork-hazards command."""
    names = ThreadNames(report.threads)
    t = report.target
    where = "live process %s" % t.pid if t.kind == "live" else "core %s" % (t.core or "?")
    lines = ["fork-hazards: %s, %s" % (where, t.executable or "?")]
    if analysis.child:
        lines.append("This process is a fork child%s that did not exec:" % (
            " of PID %d" % analysis.parent_pid if analysis.parent_pid else ""))
        lines += ["  - " + child_evidence(what, f, names) for what, f in analysis.child_evidence]
    else:
        lines.append("No evidence that this process is a fork child.")
    lines.append("")
    if analysis.hazards:
        lines.append("%d fork hazard%s:" % (len(analysis.hazards), _s(len(analysis.hazards))))
        for h in analysis.hazards:
            who = ", ".join(names(x) for x in h.threads) if h.threads else "the process"
            lines.append("[%s] %s (%s)" % (h.kind, who, h.confidence))
            lines.append("  evidence: " + evidence(h, names))
            lines.append("  advice: " + advice(h))
    else:
        lines.append("No fork hazards found.")
    lines.append("Checked: " + "; ".join(checked(what, f) for what, f in analysis.checked))
    for p in analysis.problems:
        lines.append("  (could not read: %s)" % fork_problem(p))
    return "\n".join(lines)

"""Distributed collectives (torch.distributed's c10d: gloo, NCCL, ...): a
thread whose innermost Python frame is one of distributed_c10d.py's
collectives (all_reduce, barrier, broadcast, all_gather, ...) and whose
native wait is the work's (`work.wait()`: a condition variable, a bare
futex where glibc's layouts are unknown, or a sleep for NCCL's blocking
wait) waits for the other ranks of its process group: they are other
processes, so no thread of this one owns the wait.

Named from what the program itself holds, never guessed: the collective
from the frame; the backend from the type of the process-group object in
its locals (`default_pg` or `group`: ProcessGroupGloo is gloo); the rank and
world size from the int locals named `rank` and `world_size` of the frames
outward (where a training script keeps them, from its arguments or from
$RANK/$WORLD_SIZE), with the frame they were read from.  The sequence number
of the collective lives in the C++ process group, which cannot be read
without debug information: it is not given.
"""
import copy
import re

from pyhang.libraries import is_system_library
from pyhang.model.kinds import Confidence, OwnerSource, VerdictKind, WaitKind
from pyhang.model.python_facts import PyFrameFacts
from pyhang.model.report import BlockedOn, Verdict
from pyhang.model.verdict_facts import CollectiveMismatchFacts, CollectiveWait, ProcessWait, Rank, RankGroup
from pyhang.model.waits import CollectiveDetail, syscall_of

C10D_FILE = "torch/distributed/distributed_c10d.py"

# The functions of distributed_c10d.py that wait for the other ranks (their work's wait()).
COLLECTIVES = frozenset((
    "all_reduce", "all_reduce_multigpu", "all_reduce_coalesced", "reduce", "reduce_multigpu",
    "broadcast", "broadcast_multigpu", "all_gather", "all_gather_multigpu", "all_gather_into_tensor",
    "all_gather_coalesced", "_all_gather_base", "gather", "scatter", "reduce_scatter", "reduce_scatter_multigpu",
    "reduce_scatter_tensor", "_reduce_scatter_base", "all_to_all", "all_to_all_single", "barrier",
    "monitored_barrier", "send", "recv"))

# Native waits work.wait() sleeps in: the work's condition variable (a bare futex when glibc's layouts are
# unknown); NCCL's blocking wait sleeps between polls.
_NATIVE_WAITS = (WaitKind.CONDVAR, WaitKind.FUTEX)
_SLEEPS = ("nanosleep", "clock_nanosleep")

LOCAL_FRAMES = 16    # Python frames, from the collective's outwards, whose locals are read
_BACKENDS = {"ProcessGroupGloo": "gloo", "ProcessGroupNCCL": "nccl", "ProcessGroupMPI": "mpi",
             "ProcessGroupUCC": "ucc"}
_GROUP_LOCALS = ("default_pg", "group")
# gloo's transports (tcp, uv, ibverbs): a buffer's wait for a peer's data, or for the peer to take its own.
GLOO_WAITS = ("waitRecv", "waitSend")
_INT = re.compile(r"-?[0-9]+\Z")


def collective_frame(frames):
    """The innermost of `frames` (Python frames, innermost first: PyFrameFacts
    or PythonFrames) when it is one of c10d's collectives, else None."""
    if not frames:
        return None
    f = frames[0]
    if f.function in COLLECTIVES and (f.file or "").replace("\\", "/").endswith(C10D_FILE):
        return f
    return None


def _backend(locals_):
    """The backend of the process-group object among a collective frame's
    locals, and its type name: (backend or None, type or None)."""
    for v in locals_:
        if v.name in _GROUP_LOCALS and "ProcessGroup" in (v.type or ""):
            short = v.type.rsplit(".", 1)[-1]
            return _BACKENDS.get(short), short
    return None, None


def _int_local(locals_, name):
    for v in locals_:
        if v.name == name and v.type == "int" and _INT.match(v.repr or ""):
            return int(v.repr)
    return None


def describe(frames, found):
    """The collective a thread waits in, from its Python frames (PyFrameFacts,
    innermost first) and the locals read of them (`found`: the
    answers of Facts.frame_locals, in order): a CollectiveDetail, its
    read_from naming the frame the rank and world size were read from."""
    top = frames[0]
    out = CollectiveDetail(function=top.function, line=top.line)
    first = found[0].locals if found and found[0] is not None else []
    out.backend, out.group_type = _backend(first)
    for f, fl in zip(frames, found):
        locals_ = fl.locals if fl is not None else []
        for name in ("rank", "world_size"):
            value = _int_local(locals_, name)
            if getattr(out, name) is None and value is not None:
                setattr(out, name, value)
                out.read_from[name] = {"function": f.function, "file": f.file, "line": f.line}
    if out.rank is not None and out.world_size is not None and not 0 <= out.rank < out.world_size:
        out.rank = out.world_size = None   # not a rank of that world: some other `rank`
        out.read_from = {}
    return out


def add_collectives(facts, view, threads):
    """ThreadSnapshot.collective of each thread whose innermost Python frame
    is a c10d collective: one frame_locals question for all of them."""
    # the innermost frame's (function, file) first: cheap, where the frames themselves are made when asked
    innermost = [(t, view.frame_keys(t.tid)[:1]) for t in threads]
    waiting = [t for t, keys in innermost
               if keys and collective_frame([PyFrameFacts(function=keys[0][0], file=keys[0][1])]) is not None]
    waiting = [(t, view.frames(t.tid)[:LOCAL_FRAMES]) for t in waiting]
    if not waiting:
        return
    asked = [[f.frame, f.code] for _, frames in waiting for f in frames]
    found = facts.frame_locals(asked) or []
    at = 0
    for t, frames in waiting:
        t.collective = describe(frames, found[at:at + len(frames)])
        at += len(frames)


def _waits_for_work(b):
    if b is None:
        return False
    if b.kind in _NATIVE_WAITS:
        return True
    return syscall_of(b).name in _SLEEPS


def transport_wait(native_frames):
    """The gloo transport function a thread (its native frames, frame 0
    first) waits in for a peer rank's data, or None: the first frame outside
    glibc (GLOO_WAITS)."""
    f = next((f for f in native_frames if not is_system_library(f.library)), None)
    name = (f.function or "") if f is not None else ""
    if name.startswith("gloo::transport::") and name.split("(", 1)[0].rsplit("::", 1)[-1] in GLOO_WAITS:
        return name.split("(", 1)[0]
    return None


def collective_wait(b, frames, collective, native_frames=()):
    """`b`, or, for a thread in a c10d collective whose native wait is the
    work's, the collective wait: owned by the other ranks (other
    processes), likely (the work's wait is told from where it sleeps, not
    read from the work).  `frames`: its Python frames (view frames),
    `collective`: its ThreadSnapshot.collective (None when not read).  A
    thread of gloo's own (a process group's worker running the collective)
    waiting in its transport for a peer's data (transport_wait) waits for
    the other ranks too, in a collective its frames do not name."""
    top = collective_frame(frames)
    if top is None and _waits_for_work(b) and b.kind != WaitKind.SYSCALL:
        transport = transport_wait(native_frames)
        if transport is not None:
            return BlockedOn(kind=WaitKind.COLLECTIVE, address=b.address, library=b.library, owners=[],
                             owner_source=OwnerSource.OTHER_RANKS, confidence=Confidence.LIKELY,
                             collective=CollectiveDetail(native_wait=b.kind, transport=transport))
    if top is None or not _waits_for_work(b):
        return b
    detail = copy.copy(collective) if collective is not None else \
        CollectiveDetail(function=top.function, line=top.line)
    detail.native_wait = b.kind if b.kind != WaitKind.SYSCALL else syscall_of(b).name
    return BlockedOn(kind=WaitKind.COLLECTIVE, address=b.address, library=b.library, owners=[],
                     owner_source=OwnerSource.OTHER_RANKS, confidence=Confidence.LIKELY, collective=detail)


def collective_waits(report):
    """[{tid, function, line, backend, rank, world_size, transport}] of the
    threads of `report` waiting in a collective: what the process waits for
    in other processes (`transport`: gloo's function a worker of its own
    waits in, whose collective its frames do not name: `function` None)."""
    out = []
    for t in report.threads:
        b = t.blocked_on
        if b is not None and b.kind == WaitKind.COLLECTIVE:
            d = b.collective or CollectiveDetail()
            out.append({"tid": t.tid, "function": d.function, "line": d.line, "backend": d.backend, "rank": d.rank,
                        "world_size": d.world_size, "transport": d.transport})
    return out


def process_waits(report, across):
    """The facts of the waits-on-process verdict (`across`: those of
    syscalls.waits_on_processes, or None) with the collective waits added:
    {"waits": [..., ProcessWait(syscall, fd and link None, pids [], its
    `collective`)], "root"}; the
    ranks are the launcher's children (torchrun, torch.multiprocessing.spawn),
    so `root` is the parent.  None when there are none."""
    ranks = collective_waits(report)
    if not ranks:
        return across
    parent, own = report.target.parent_pid, report.target.pid
    facts = dict(across or {"waits": [], "root": parent if parent and parent > 1 else own})
    facts["waits"] = list(facts["waits"]) + [
        ProcessWait(tid=w["tid"], syscall=None, fd=None, link=None, pids=[],
                    collective=CollectiveWait(**{k: v for k, v in w.items() if k != "tid"})) for w in ranks]
    return facts



def _rank_key(entry):
    pid, w = entry
    return (w["rank"] is None, w["rank"] if w["rank"] is not None else pid)


def _waiting_ranks(tree):
    """[(pid, wait)]: each examined process with a thread waiting in a
    collective, and that wait (its main thread's when it has several)."""
    out = []
    for p in tree.processes:
        waits = [w for w in collective_waits(p.report) if w["function"]] if p.report is not None else []
        if waits:
            main = p.report.target.namespace_pid or p.pid
            out.append((p.pid, next((w for w in waits if w["tid"] == main), waits[0])))
    return out


def diverged(tree):
    """The tree's collective-mismatch verdict, as [(pid, Verdict)]: processes
    wait in different collectives (ranks 1, 2 in all_reduce while rank 0 is
    in barrier), which the ranks of one job must call in the same order: none
    can finish.  The odd ones are the groups smaller than the largest (none
    when no group is the largest alone); the verdict is the first odd rank's
    process's (else the first rank's).  Likely: the sequence numbers, which
    would prove they are at the same step, are not read."""
    waiting = sorted(_waiting_ranks(tree), key=_rank_key)
    groups = {}
    for pid, w in waiting:
        groups.setdefault(w["function"], []).append((pid, w))
    if len(groups) < 2:
        return []
    ordered = sorted(groups.values(), key=lambda g: (-len(g), _rank_key(g[0])))
    majority = len(ordered[0]) > len(ordered[1])
    odd = [pid for g in ordered[1:] for pid, _ in g] if majority else []
    sizes = {w["world_size"] for _, w in waiting if w["world_size"] is not None}
    pid = odd[0] if odd else waiting[0][0]
    tid = next(w["tid"] for p, w in waiting if p == pid)
    facts = CollectiveMismatchFacts(
        groups=[RankGroup(function=g[0][1]["function"], ranks=[
            Rank(pid=p, tid=w["tid"], rank=w["rank"], line=w["line"]) for p, w in g]) for g in ordered],
        odd=odd, world_size=sizes.pop() if len(sizes) == 1 else None,
        backend=waiting[0][1]["backend"], confidence=Confidence.LIKELY)
    return [(pid, Verdict(kind=VerdictKind.COLLECTIVE_MISMATCH, threads=[tid], facts=facts))]

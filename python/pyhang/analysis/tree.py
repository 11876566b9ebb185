"""Across processes: the wait-for graph of a process tree and its cycles,
from the per-process reports (plain Python, no gdb, no target).

Nodes are (pid, tid).  Within a process the edges are its report's.  Across
processes, from the system-call waits (pyhang.analysis.syscalls):

- wait4/waitid on a child waits for the child to exit: an edge to every
  thread of that child (certain to its main thread, which must end for the
  process to; likely to the others);
- a pipe read or write waits for the processes holding the other end, a
  unix socket for those holding its peer, a flock for the lock's holders:
  an edge to every thread of each — to those of its threads that wait on
  the same object or for the waiter's process, when /proc names some —
  certain when it is the only such process and has one thread, else likely
  (any of them could write, close or unlock).  A holder whose every thread
  waits on the same object from the same end as the waiter (another reader
  of the pipe) is no edge when some other holder could end the wait: it
  could write only after that one did (pool workers reading one pipe whose
  write end each inherited would otherwise make cycles with each other).

A cycle that spans two processes or more is a deadlock across processes
when none of its waits can be ended by a thread outside it (`proven`: a
pipe any of a process's threads may write to is stuck only when all of
them are); cycles within one process are its own report's.  A wait on a pipe or socket
in no cycle whose other end no one serves now (every thread of every other
holder blocked on something else) is a stall: a fact of this moment, said
with what each holder's threads wait on (not a helper process's loop
waiting for its next request: analysis.idle.helper_loop).  Ranks of one
distributed job waiting in different collectives: analysis.collectives.
Fork hazards across processes: pyhang.analysis.tree_forks.
"""
from pyhang.analysis import collectives, completeness, idle, pools, tree_forks
from pyhang.model.files import FdObject
from pyhang.model.kinds import AccountReason, Confidence, OwnerSource, ThreadState, TreeEdgeKind, WaitKind
from pyhang.model.tree import TreeDeadlock, TreeEdge, TreeReport
from pyhang.model.waits import SyscallWait, syscall_of

MAX_CYCLES = 32          # cycles listed
MAX_STEPS = 200000       # steps of the cycle search, for pathological graphs
_NO_OBJECT = FdObject()  # a wait on no fd, or on one whose object is not known


def _threads(entry):
    return [t.tid for t in entry.report.threads] if entry.report is not None else []


def _to_process(edges, waiter, entry, kind, facts, only=(), alone=True):
    """Edges from `waiter` to every thread of process `entry` (to those of
    `only` when it names some of them).  `alone`: no other process could
    end the wait either."""
    tids = _threads(entry)
    targets = [t for t in tids if t in only] or tids
    for tid in targets:
        if (entry.pid, tid) == waiter:
            continue
        if kind == TreeEdgeKind.CHILD_EXIT:
            sure = tid == entry.pid
        else:
            sure = alone and len(tids) == 1
        edges.append(TreeEdge(waiter=waiter, owner=(entry.pid, tid), kind=kind,
                              confidence=Confidence.CERTAIN if sure else Confidence.LIKELY, facts=dict(facts)))


def _children(processes, pid):
    return [p for p in processes.values() if p.parent_pid == pid]


def _fd_waits(entry):
    """{(link, access)} of the fd objects the threads of a process wait on
    in system calls, or None when one of its threads waits on nothing such
    (it runs, sleeps, waits on a lock...): such a process may act by itself."""
    out = set()
    for t in entry.report.threads:
        b = t.blocked_on
        obj = syscall_of(b).object
        if obj is None or not obj.link:
            return None
        out.add((obj.link, obj.access))
    return out or None


def _mirrors(holders, obj, waits):
    """PIDs among `holders` of the other end that cannot end the wait by
    themselves: every thread of theirs waits on this same object, from the
    same end, as the waiter does (two readers of one pipe), so they can
    write only after someone else has.  Only when another holder can act:
    when every holder is such a mirror, nobody else can write, and their
    edges are what makes the real cycle."""
    same = {(obj.link, obj.access)}
    pids = {h.pid for h in holders if waits.get(h.pid) == same}
    others = [h for h in holders if h.pid not in pids]
    return pids if others else set()


def cross_edges(tree):
    """Every edge of the tree's graph: each report's own, and those the
    system-call waits make across processes."""
    processes = {p.pid: p for p in tree.processes}
    waits = {p.pid: _fd_waits(p) for p in tree.processes if p.report is not None}
    edges = []
    for p in tree.processes:
        if p.report is None:
            continue
        for e in p.report.edges:
            edges.append(TreeEdge(waiter=(p.pid, e.waiter), owner=(p.pid, e.owner), kind=e.kind,
                                  confidence=Confidence.LIKELY if e.source == OwnerSource.HEURISTIC
                                  else Confidence.CERTAIN, facts={"address": e.address, "source": e.source}))
        for t in p.report.threads:
            b = t.blocked_on
            if b is None or b.kind != WaitKind.SYSCALL:
                continue
            s = b.syscall or SyscallWait()
            waiter = (p.pid, t.tid)
            if not s.fd_table and (s.has_fd() or s.watches_fds):
                tree.unfollowed.append(waiter)
            if s.waits_for_child():
                child = s.child
                targets = [processes[child]] if child is not None and child > 0 and child in processes else \
                    _children(processes, p.pid) if child in (-1, 0) else []
                for c in targets:
                    _to_process(edges, waiter, c, TreeEdgeKind.CHILD_EXIT, {"syscall": s.name, "child": c.pid})
            obj = s.object or _NO_OBJECT
            kind = TreeEdgeKind.PIPE_OTHER_END if obj.kind == "pipe" else \
                TreeEdgeKind.SOCKET_PEER if obj.kind == "socket" else None
            if kind is not None:
                holders = obj.holders or ()
                mirrors = _mirrors(holders, obj, waits)
                for h in holders:
                    if h.pid in processes and h.pid not in mirrors:
                        # the holder's threads parked on it or waiting for this process, when there are
                        relevant = {x.tid for x in h.threads if x.relevant}
                        _to_process(edges, waiter, processes[h.pid], kind,
                                    {"syscall": s.name, "fd": s.fd, "link": obj.link, "holder_fds": list(h.fds)},
                                    relevant, alone=len(holders) == 1 and obj.holders_complete)
            lockers = [h for h in s.lock_holders or () if h.pid in processes and h.pid != p.pid]
            for h in lockers:
                _to_process(edges, waiter, processes[h.pid], TreeEdgeKind.FILE_LOCK,
                            {"syscall": s.name, "fd": s.fd, "path": obj.path},
                            alone=len(lockers) == 1)
    return edges


MAX_THREADS_LISTED = 8   # a holder's threads listed in a stall


def _serving(entry, holder):
    """Whether a holder of the other end may serve it now: not examined,
    a thread of it not blocked (it runs), or one parked on the same object
    or waiting for the waiter's process (`relevant`)."""
    if entry is None or entry.report is None or not entry.report.threads:
        return True
    if any(x.relevant for x in holder.threads):
        return True
    return any(t.blocked_on is None for t in entry.report.threads)


def _doing(t):
    b = t.blocked_on
    return {"tid": t.tid, "kind": b.kind, "syscall": syscall_of(b).name}


def stalls(tree, in_cycles):
    """Waits on a pipe or a socket, in no cycle, whose other end is held
    only by other examined processes none of whose threads can serve it
    now (_serving).  [dict], the TreeReport.stalls shape."""
    processes = {p.pid: p for p in tree.processes}
    out = []
    for p in tree.processes:
        for t in p.report.threads if p.report is not None else ():
            b = t.blocked_on
            s = syscall_of(b)
            obj = s.object
            if obj is None or obj.kind not in ("pipe", "socket") or not obj.holders or not obj.holders_complete:
                continue
            holders = obj.holders
            if (p.pid, t.tid) in in_cycles or any(h.pid == p.pid for h in holders) or idle.helper_loop(t):
                continue
            if any(_serving(processes.get(h.pid), h) for h in holders):
                continue
            out.append({"waiter": (p.pid, t.tid), "syscall": s.name, "fd": s.fd, "kind": obj.kind,
                        "link": obj.link,
                        "holders": [{"pid": h.pid, "comm": processes[h.pid].comm,
                                     "threads": [_doing(x) for x in processes[h.pid].report.threads
                                                 [:MAX_THREADS_LISTED]],
                                     "thread_count": len(processes[h.pid].report.threads)} for h in holders]})
    return out


def cycles(edges):
    """Elementary cycles of the graph, each from its smallest node, at most
    MAX_CYCLES of them; (cycles as lists of edges, truncated)."""
    out = {}
    for e in edges:
        out.setdefault(e.waiter, []).append(e)
    found, steps = [], 0
    for start in sorted(out):
        # cycles through `start` whose other nodes are all larger (each cycle once)
        stack = [(start, iter(out.get(start, ())))]
        path, on_path = [], {start}
        while stack:
            steps += 1
            if steps > MAX_STEPS or len(found) >= MAX_CYCLES:
                return found, True
            node, it = stack[-1]
            e = next(it, None)
            if e is None:
                stack.pop()
                if path:
                    on_path.discard(path.pop().owner)
                continue
            if e.owner == start:
                found.append(path + [e])
            elif e.owner > start and e.owner not in on_path:
                path.append(e)
                on_path.add(e.owner)
                stack.append((e.owner, iter(out.get(e.owner, ()))))
    return found, False


# Waits any one of several threads may end (write, send, unlock): a cycle
# through one of them holds only if none of the others can end it either.
_ANY_OF = (TreeEdgeKind.PIPE_OTHER_END, TreeEdgeKind.SOCKET_PEER, TreeEdgeKind.FILE_LOCK)


def proven(cycle, out_edges):
    """Whether `cycle` is a deadlock: for each of its waits that any of
    several threads may end, every other of those threads is in the cycle
    or waits on one of its threads.  A thread that waits on something else
    (a task handler waiting for tasks, a thread asleep) may still write: a
    cycle through its sibling is then no deadlock (pool plumbing)."""
    nodes = {e.waiter for e in cycle}
    for e in cycle:
        if e.kind not in _ANY_OF:
            continue
        for alt in out_edges.get(e.waiter, ()):
            if alt.kind != e.kind or alt.facts.get("link") != e.facts.get("link") or alt.owner in nodes:
                continue
            if not any(x.owner in nodes for x in out_edges.get(alt.owner, ())):
                return False
    return True


def analyse(tree: TreeReport):
    """The tree's edges, its deadlocks across processes (a cycle's
    confidence is that of its weakest edge) and its fork hazards."""
    tree.edges = cross_edges(tree)
    found, tree.cycles_truncated = cycles(tree.edges)
    out_edges = {}
    for e in tree.edges:
        out_edges.setdefault(e.waiter, []).append(e)
    for cycle in found:
        nodes = [e.waiter for e in cycle]
        if len({pid for pid, _ in nodes}) < 2 or not proven(cycle, out_edges):
            continue   # within one process: its own report lists it; or another thread may still end a wait
        sure = all(e.confidence == Confidence.CERTAIN for e in cycle)
        tree.deadlocks.append(TreeDeadlock(nodes=nodes, edges=cycle,
                                           confidence=Confidence.CERTAIN if sure else Confidence.LIKELY))
    # the certain ones first, then by size
    tree.deadlocks.sort(key=lambda d: (d.confidence != Confidence.CERTAIN, len(d.nodes), d.nodes))
    tree.stalls = stalls(tree, {n for d in tree.deadlocks for n in d.nodes})
    tree.verdicts = pools.lost_tasks(tree) + collectives.diverged(tree)
    tree.fork_hazards = tree_forks.hazards(tree)
    reports = [p.report for p in tree.processes if p.report is not None]
    tree.unaccounted = unaccounted(tree)
    tree.exit_status = completeness.exit_status(
        tree.deadlocks or any(r.deadlocks for r in reports),
        tree.stalls or tree.verdicts or any(completeness.hung(r) for r in reports) or
        [h for _, h in tree.fork_hazards if h.hangs],
        any(completeness.incomplete(r) for r in reports) or tree.unaccounted,
        not reports or any(completeness.runs_python(r) for r in reports))
    return tree


def unaccounted(tree):
    """[(pid, tid)] of the threads of the tree's Python processes that its
    look together does not account for: waiting on what pyhang cannot name
    or does not model, or on a process outside the tree (or one not named:
    a child, a socket's peer elsewhere).  A wait on a process of the tree
    is its cross-process analysis's (edges, deadlocks, stalls)."""
    pids = {p.pid for p in tree.processes}
    out = []
    for p in tree.processes:
        r = p.report
        if r is None or not completeness.runs_python(r):
            continue
        for t in r.threads:
            a = t.account
            if a is None:
                continue
            if a.state == ThreadState.UNACCOUNTED or \
                    (a.state == ThreadState.ELSEWHERE and a.reason != AccountReason.OWNER_GONE and
                     (not a.pids or not set(a.pids) <= pids)):
                out.append((p.pid, t.tid))
    return out

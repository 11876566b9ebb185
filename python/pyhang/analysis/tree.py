"""Across processes: the wait-for graph of a process tree and its knots,
from the per-process reports (plain Python, no gdb, no target).

Nodes are (pid, tid).  Within a process the edges are its report's.  Across
processes, from the system-call waits (pyhang.analysis.syscalls):

- wait4/waitid on a child waits for the child to exit: an edge to every
  thread of that child (certain to its main thread, which must end for the
  process to; likely to the others); a wait for any child (-1, 0) may be
  ended by any one of them;
- a pipe read or write waits for the processes holding the other end, a
  unix socket for those holding its peer, a flock for the lock's holders:
  an edge to every thread of each (this process's other threads included),
  any one of which could write, close or unlock;
- a thread its report calls idle, waiting for work on an object of its
  process (a queue's get, a condition, a native pool), waits for any other
  thread of its process to give it (likely): idle threads keep a process
  able to progress only while some thread that could feed them can;
- a thread waiting for a multiprocessing Pool's result (Pool.map) waits
  for any of the pool's workers among its children (likely: which one runs
  the task is not known).

What each waiting thread needs is a list of `Need`s, all of which must be
met for its wait to end: a need with one edge (an AND-wait: a lock with one
owner, a child's exit) is met only by its owner, a need with several (an
OR-wait: the _ANY_OF kinds, one wait's alternatives) by any one of them.  A
need is open when one of its possible servers is not in the graph (a holder
outside the tree or not examined, a scan of /proc cut short): an open need
is never proven unmet.

A deadlock across processes is a knot (`stuck`, `knots`): a set of threads,
strongly connected, each of which has a need all of whose possible servers
are in the set — no edge leads out of it to a thread that can progress (one
that waits on nothing the graph knows counts as able to).  Several threads
reading pipes whose write ends each of the others holds are one knot with
all of them, never several pairwise cycles; a holder outside the set that
can run makes no deadlock.  Threads stuck only because they wait on a knot
(a chain hanging off it) are its `waiting`, not its members.  Knots within
one process are its own report's.  A wait on a pipe or socket in no knot
whose other end no one serves now (every thread of every other holder
blocked on something else) is a stall: a fact of this moment, said with
what each holder's threads wait on (not a helper process's loop waiting for
its next request, analysis.idle.helper_loop, nor a wait its report calls
idle: a Pool worker reading its task pipe).  A wait whose server died
(a zombie child): analysis.dead_servers.  Ranks of one distributed job
waiting in different collectives: analysis.collectives.  Fork hazards
across processes: pyhang.analysis.tree_forks.
"""
from pyhang.analysis import account, collectives, completeness, dead_servers, held, idle, pools, syscalls, \
    tree_forks, waitgraph
from pyhang.model.files import FdObject
from pyhang.model.kinds import AccountReason, Confidence, OwnerSource, ThreadState, TreeEdgeKind, VerdictKind, \
    WaitKind
from pyhang.model.record import replace
from pyhang.model.tree import KnotSleeper, OutsideWait, Stall, StallHolder, StallThread, TreeDeadlock, TreeEdge, \
    TreeReport
from pyhang.model.tree_edge_facts import ChildExitFacts, FdPeerFacts, FileLockFacts, ProcessEdgeFacts
from pyhang.model.waits import SyscallWait, syscall_of

_NO_OBJECT = FdObject()  # a wait on no fd, or on one whose object is not known
# Waits any one of several threads may end (write, send, unlock): one Need with every one of them.
_ANY_OF = (TreeEdgeKind.PIPE_OTHER_END, TreeEdgeKind.SOCKET_PEER, TreeEdgeKind.FILE_LOCK)
_RANK = {Confidence.CERTAIN: 2, Confidence.LIKELY: 1}   # anything else (a guess) ranks 0


class Need:
    """One thing a waiting thread needs for its wait to end: `edges` to the
    threads any one of which can give it (one edge: that thread must);
    `open`: a possible server is not in the graph, so it is never proven unmet."""
    __slots__ = ("edges", "open", "owners", "confidence")

    def __init__(self, edges, open=False, empty_is_open=True):
        self.edges = list(edges)
        self.open = open or (empty_is_open and not self.edges)
        self.owners = frozenset(e.owner for e in self.edges)
        # the least sure of its edges: each must be one the waiter waits for
        self.confidence = min((e.confidence for e in self.edges), key=lambda c: _RANK.get(c, 0),
                              default=Confidence.GUESS)

    def unmet(self, within):
        """Whether every possible server is in `within` (a set of nodes that cannot progress)."""
        return not self.open and self.owners <= within


def _threads(entry):
    return [t.tid for t in entry.report.threads] if entry.report is not None else []


def _to_process(waiter, entry, kind, facts):
    """Edges from `waiter` to every thread of process `entry` but itself, each with a copy of record `facts`."""
    out = []
    for tid in _threads(entry):
        if (entry.pid, tid) == waiter:
            continue
        sure = kind != TreeEdgeKind.CHILD_EXIT or tid == entry.pid
        out.append(TreeEdge(waiter=waiter, owner=(entry.pid, tid), kind=kind,
                            confidence=Confidence.CERTAIN if sure else Confidence.LIKELY, facts=replace(facts)))
    return out


def _examined(entry):
    return entry is not None and entry.report is not None and bool(entry.report.threads)


def _children(processes, pid):
    return [p for p in processes.values() if p.parent_pid == pid]


def _child_needs(waiter, s, processes, own):
    """(edges, needs) of a wait for a child to exit: one child's threads must all end (its main
    thread certainly); for any child (-1, 0) the main thread of any one of them."""
    child = s.child
    if child is not None and child > 0:
        entry = processes.get(child)
        if entry is None:
            return [], []
        edges = _to_process(waiter, entry, TreeEdgeKind.CHILD_EXIT, ChildExitFacts(syscall=s.name, child=child))
        return edges, [Need([e]) for e in edges] if _examined(entry) else [Need(edges, open=True)]
    if child not in (-1, 0):
        return [], []
    edges, mains, opened = [], [], False
    for c in _children(processes, own):
        made = _to_process(waiter, c, TreeEdgeKind.CHILD_EXIT, ChildExitFacts(syscall=s.name, child=c.pid))
        edges += made
        mains += [e for e in made if e.owner == (c.pid, c.pid)]
        opened = opened or not _examined(c)
    return edges, [Need(mains, open=opened)] if edges else []


def _workers_exit_needs(waiter, s, processes, own):
    """(edges, needs) of a Pool's worker handler between two looks (pools.worker_handler_between_looks): it
    waits for any one of the pool's workers to exit (likely: read from its frames)."""
    mains = []
    for c in pools.workers_of(processes, own):
        made = _to_process(waiter, c, TreeEdgeKind.CHILD_EXIT, ChildExitFacts(syscall=s.name, child=c.pid))
        mains += [e for e in made if e.owner == (c.pid, c.pid)]
    for e in mains:
        e.confidence = Confidence.LIKELY
    return mains, [Need(mains)] if mains else []


def _holder_needs(waiter, holders, complete, processes, kind, facts):
    """(edges, [the one Need]) of a wait any holder's thread may end (holders: [(pid, {field: value} of record
    `facts` that holder's edges change)])."""
    edges, opened = [], not complete or not holders
    for pid, extra in holders:
        entry = processes.get(pid)
        if pid is None or pid <= 0 or not _examined(entry):
            opened = True
            continue
        edges += _to_process(waiter, entry, kind, replace(facts, **extra))
    return edges, [Need(edges, open=opened)]


def _waits_for_work(t):
    a = t.account
    return a is not None and a.state == ThreadState.IDLE and a.reason in (AccountReason.WAITS_FOR_WORK,
                                                                           AccountReason.POOL_WORK)


def _work_need(entry, t):
    """The Need of an idle thread that waits for work on an object of its process (a queue, a
    condition, a native pool's): any other thread of its process may give it (likely: which of them
    reach the object is not known).  Alone, a thread of a process with no other is never proven
    stuck; the edges stay out of the tree's edges (each idle thread would add one to every thread)."""
    waiter = (entry.pid, t.tid)
    if len(entry.report.threads) > MAX_WORK_GIVERS:
        return Need([], open=True)   # bounded: an edge to every thread of a large pool for each idle one
    return Need([TreeEdge(waiter=waiter, owner=(entry.pid, o.tid), kind=TreeEdgeKind.WORK_GIVER,
                          confidence=Confidence.LIKELY) for o in entry.report.threads if o.tid != t.tid])


# Threads of a process past which its idle threads' work-giver needs are left open (never proven unmet):
# each would be an edge to every other thread, n squared in all.
MAX_WORK_GIVERS = 256


def _poll_needs(waiter, s, processes):
    """(edges, [the one Need]) of a poll or select on several fds: any one of them ready ends it, so
    any thread of any process holding the other end of any of them may; a watched fd that is no
    pipe or socket (an eventfd, a listener, a file) or whose holders are not all known opens it."""
    edges, opened = [], False
    for w in s.fds:
        obj = w.get("object")
        kind = TreeEdgeKind.PIPE_OTHER_END if obj is not None and obj.kind == "pipe" else \
            TreeEdgeKind.SOCKET_PEER if obj is not None and obj.kind == "socket" else None
        if kind is None or account.listening(obj):
            return [], [Need([], open=True)]
        made, (need,) = _holder_needs(waiter, [(h.pid, {"holder_fds": list(h.fds)}) for h in obj.holders or ()],
                                      obj.holders is not None and obj.holders_complete, processes, kind,
                                      FdPeerFacts(syscall=s.name, fd=w.get("fd"), link=obj.link,
                                                  direction=w.get("direction")))
        edges += made
        opened = opened or need.open
    return edges, [Need(edges, open=opened)]


def _pool_workers(processes, entry):
    """The examined multiprocessing Pool workers among the children of `entry` (analysis.pools.is_worker)."""
    return [c for c in _children(processes, entry.pid) if _examined(c) and pools.is_worker(c.report)]


def _result_need(waiter, entry, processes):
    """The Need of a thread of `entry` waiting for a multiprocessing Pool's result (Pool.map, an ApplyResult's
    get): any of the pool's workers (their main threads) may be the one running its task (likely); None when
    the tree has no worker of it."""
    workers = _pool_workers(processes, entry)
    if not workers:
        return None
    return Need([TreeEdge(waiter=waiter, owner=(w.pid, w.pid), kind=TreeEdgeKind.POOL_RESULT,
                          confidence=Confidence.LIKELY) for w in workers])


def _direction(call):
    return "read" if call in syscalls.READS else "write" if call in syscalls.WRITES else None


def graph(tree):
    """(edges, needs) of the tree's wait-for graph: every edge (each
    report's own, and those the system-call waits make across processes),
    and {node: [Need]} of each waiting thread."""
    processes = {p.pid: p for p in tree.processes}
    edges, needs = [], {}
    for p in tree.processes:
        if p.report is None:
            continue
        for e in p.report.edges:
            edge = TreeEdge(waiter=(p.pid, e.waiter), owner=(p.pid, e.owner), kind=e.kind,
                            confidence=Confidence.LIKELY if e.source == OwnerSource.HEURISTIC
                            else Confidence.CERTAIN, facts=ProcessEdgeFacts(address=e.address, source=e.source))
            edges.append(edge)
            needs.setdefault(edge.waiter, []).append(Need([edge]))
        for t in p.report.threads:
            b = t.blocked_on
            if _waits_for_work(t) and (b is None or b.kind != WaitKind.SYSCALL):
                needs.setdefault((p.pid, t.tid), []).append(_work_need(p, t))
            result = _result_need((p.pid, t.tid), p, processes) if pools.result_wait(t) is not None else None
            if result is not None:
                needs.setdefault((p.pid, t.tid), []).append(result)
            if b is None or b.kind != WaitKind.SYSCALL:
                continue
            s = b.syscall or SyscallWait()
            waiter = (p.pid, t.tid)
            if not s.fd_table and (s.has_fd() or s.watches_fds):
                tree.unfollowed.append(waiter)
            made, wanted = [], []
            if s.waits_for_child():
                made, wanted = _child_needs(waiter, s, processes, p.pid)
            obj = s.object or _NO_OBJECT
            kind = TreeEdgeKind.PIPE_OTHER_END if obj.kind == "pipe" else \
                TreeEdgeKind.SOCKET_PEER if obj.kind == "socket" else None
            if kind is not None and s.fd_table:
                made, wanted = _holder_needs(waiter, [(h.pid, {"holder_fds": list(h.fds)}) for h in obj.holders or ()],
                                             obj.holders is not None and obj.holders_complete, processes, kind,
                                             FdPeerFacts(syscall=s.name, fd=s.fd, link=obj.link,
                                                         direction=_direction(s.name)))
            if s.watches_fds and s.fds and s.fd_table:
                made, wanted = _poll_needs(waiter, s, processes)
            if s.lock_holders and s.fd_table:
                made, wanted = _holder_needs(waiter, [(pid, {}) for pid in dict.fromkeys(
                    h.pid for h in s.lock_holders)], True, processes, TreeEdgeKind.FILE_LOCK,
                    FileLockFacts(syscall=s.name, fd=s.fd, path=obj.path))
            if not made and pools.worker_handler_between_looks(t):
                made, wanted = _workers_exit_needs(waiter, s, processes, p.pid)
            if account.timed(s):
                # a wait with a timeout ends by itself: it stays stuck only while what its program does
                # then (a loop that polls again, as a DataLoader's does) does not serve the others
                for e in made:
                    e.confidence = Confidence.LIKELY
                wanted = [Need(n.edges, open=n.open) for n in wanted]
            edges += made
            if wanted:
                needs.setdefault(waiter, []).extend(wanted)
    return edges, needs


def stuck(needs, within=None):
    """The threads that cannot progress: the largest set of them (among
    `within`, all waiting threads by default) each of which has a need
    whose every possible server is in the set."""
    out = set(needs if within is None else within)
    out = {n for n in out if any(not need.open for need in needs.get(n, ()))}
    changed = True
    while changed:
        changed = False
        for n in sorted(out):
            if not any(need.unmet(out) for need in needs[n]):
                out.discard(n)
                changed = True
    return out


def _blocking(nodes, needs):
    """{node: [owner]}: the edges of the needs of `nodes` unmet within them."""
    return {n: sorted(set().union(*[need.owners for need in needs[n] if need.unmet(nodes)])) for n in nodes}


def knots(nodes, needs):
    """[sorted [node]]: the knots among `nodes` (threads that cannot
    progress, `stuck`): each a strongly connected set every member of which
    has a need unmet within the set alone.  A component that needs threads
    outside itself too is cut down to the part that does not (its core),
    whose knots are looked for again."""
    out = []
    succ = _blocking(nodes, needs)
    for comp in waitgraph.strong_components(set(nodes), succ):
        if len(comp) == 1 and comp[0] not in succ[comp[0]]:
            continue    # waits on a knot, or on a thread stuck by itself: no cycle of its own
        core = stuck(needs, comp)
        if core == set(comp):
            out.append(comp)
        elif core:
            out.extend(knots(core, needs))
    return out


def _deadlock(members, in_knots, needs, succ):
    """The TreeDeadlock of knot `members`: their needs unmet within it (their
    edges), its confidence (each member's surest such need; the least sure
    member's), and the threads stuck (`succ`: their unmet needs' owners) that
    wait on it, directly or through each other, in no knot (`in_knots`) themselves."""
    inside = set(members)
    edges, sure = [], []
    for n in members:
        unmet = [need for need in needs[n] if need.unmet(inside)]
        edges += [e for need in unmet for e in need.edges]
        sure.append(max((need.confidence for need in unmet), key=lambda c: _RANK.get(c, 0)))
    waiting, queue = set(), list(inside)
    back = {}
    for n, owners in succ.items():
        for o in owners:
            back.setdefault(o, set()).add(n)
    while queue:
        for w in back.get(queue.pop(), ()):
            if w not in in_knots and w not in waiting:
                waiting.add(w)
                queue.append(w)
    return TreeDeadlock(nodes=list(members), edges=edges, waiting=sorted(waiting),
                        confidence=min(sure, key=lambda c: _RANK.get(c, 0)))


def deadlocks(needs):
    """The tree's deadlocks across processes: its knots that span two
    processes or more, the certain ones first, then by size."""
    blocked = stuck(needs)
    succ = _blocking(blocked, needs)
    found = knots(blocked, needs)
    in_knots = {n for k in found for n in k}
    found = [_deadlock(k, in_knots, needs, succ) for k in found if len({pid for pid, _ in k}) > 1]
    return sorted(found, key=lambda d: (d.confidence != Confidence.CERTAIN, len(d.nodes), d.nodes))


def asleep(tree, needs):
    """{node: sleep facts (held.long_sleep)} of the threads that a pipe's, a
    socket's or a file lock's waiter counts on to serve it (holders of the
    other end) while they sleep for long or wait for a signal only."""
    servers = {e.owner for ns in needs.values() for n in ns for e in n.edges if e.kind in _ANY_OF}
    out = {}
    for p in tree.processes:
        for t in p.report.threads if p.report is not None else ():
            node = (p.pid, t.tid)
            facts = held.long_sleep(t) if node in servers and node not in needs else None
            if facts is not None:
                out[node] = facts
    return out


def _awake(need, sleepers):
    """`need` served only by its servers that do not sleep (a pipe's, a socket's, a file lock's; `sleepers`):
    with none left it is unmet, never open."""
    if need.open or not any(e.kind in _ANY_OF and e.owner in sleepers for e in need.edges):
        return need
    return Need([e for e in need.edges if e.owner not in sleepers], empty_is_open=False)


def sleepy_deadlocks(needs, sleepers, found):
    """The knots that hold while the `sleepers` (asleep) sleep: each of
    their members' pipe, socket or file-lock waits could be served, besides
    by one another, only by a thread that sleeps for long (or waits for a
    signal).  Likely, never certain: a sleeper may serve them when it wakes.
    Each TreeDeadlock names those sleepers; knots already in `found` (a
    deadlock with them awake) are not said again."""
    if not sleepers:
        return []
    taken = {n for d in found for n in d.nodes}
    without = {node: [_awake(n, sleepers) for n in ns] for node, ns in needs.items()}
    out = []
    for d in deadlocks(without):
        if taken.intersection(d.nodes):
            continue
        members = set(d.nodes)
        cut = sorted({e.owner for n in d.nodes for need in needs[n] if _awake(need, sleepers).unmet(members)
                      for e in need.edges if e.owner in sleepers})
        d.confidence = Confidence.LIKELY
        d.sleepers = [KnotSleeper(**sleepers[n], pid=n[0], tid=n[1]) for n in cut]
        out.append(d)
    return out


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
    return StallThread(tid=t.tid, kind=b.kind, syscall=syscall_of(b).name)


def stalls(tree, explained):
    """Waits on a pipe or a socket, none of `explained` (a deadlock's, a
    dead server's), whose other end is held only by other examined
    processes none of whose threads can serve it now (_serving): [Stall]."""
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
            if (p.pid, t.tid) in explained or any(h.pid == p.pid for h in holders) or idle.helper_loop(t) or \
                    _waits_for_work(t):   # a Pool worker reading its task pipe: between tasks, by design
                continue
            if any(_serving(processes.get(h.pid), h) for h in holders):
                continue
            out.append(Stall(waiter=(p.pid, t.tid), syscall=s.name, fd=s.fd, kind=obj.kind, link=obj.link,
                             holders=[StallHolder(pid=h.pid, comm=processes[h.pid].comm,
                                                  threads=[_doing(x) for x in processes[h.pid].report.threads
                                                           [:MAX_THREADS_LISTED]],
                                                  thread_count=len(processes[h.pid].report.threads))
                                      for h in holders]))
    return out


def analyse(tree: TreeReport):
    """The tree's edges, its deadlocks across processes (knots), the waits
    whose server died, its stalls, its other verdicts and its fork hazards,
    and the exit status over them and every process's report."""
    tree.edges, needs = graph(tree)
    # A wait whose server died explains the knot it is in: the living are stuck because that
    # process is gone (had it lived, it would have served the wait), so the death is the answer.
    died = dead_servers.verdicts(tree)
    dead_waits = {(pid, tid) for pid, v in died for tid in v.threads}
    found = deadlocks(needs)
    found += sleepy_deadlocks(needs, asleep(tree, needs), found)
    tree.deadlocks = [d for d in found if not dead_waits.intersection(d.nodes)]
    explained = {n for d in tree.deadlocks for n in d.nodes + d.waiting}
    died = [(pid, v) for pid, v in died if not explained.intersection((pid, tid) for tid in v.threads)]
    explained |= {(pid, tid) for pid, v in died for tid in v.threads}
    explained |= {n for d in found if d not in tree.deadlocks for n in d.nodes + d.waiting}
    tree.stalls = stalls(tree, explained)
    tree.verdicts = pools.lost_tasks(tree) + died + collectives.diverged(tree)
    tree.fork_hazards = tree_forks.hazards(tree)
    reports = [p.report for p in tree.processes if p.report is not None]
    in_deadlocks = {n for d in tree.deadlocks for n in d.nodes + d.waiting}   # a knot accounts for its threads
    found = [n for n in unaccounted(tree) if n not in in_deadlocks]
    # and a wait a dead child would have served, though a live holder may still: never the all-clear
    tree.unaccounted = found + [n for n in dead_servers.maybe_lost(tree, explained) if n not in found]
    tree.outside = outside(tree)
    tree.exit_status = completeness.exit_status(
        tree.deadlocks or any(r.deadlocks for r in reports),
        tree.stalls or tree.verdicts or any(completeness.hung(r) for r in reports) or
        [h for _, h in tree.fork_hazards if h.hangs],
        any(completeness.incomplete(r) for r in reports) or tree.unaccounted or unexamined(tree),
        not reports or any(completeness.runs_python(r) for r in reports))
    return tree


def unexamined(tree):
    """[pid] of the tree's processes that could not be examined (gdb could
    not attach, it exited before it could be, a core that cannot be read),
    0 for each descendant beyond the bound: none of them is counted as
    fine.  A zombie is no such process: it is dead, and how it ended is
    known (ProcessEntry.exit)."""
    return [p.pid for p in tree.processes if p.report is None and p.exit is None] + [0] * tree.truncated


def unaccounted(tree):
    """[(pid, tid)] of the threads of the tree's Python processes that its
    look together does not account for: waiting on what pyhang cannot name
    or does not model, or on a process outside the tree (or one not named:
    a child, a socket's peer elsewhere).  A wait on a process of the tree
    is its cross-process analysis's (edges, deadlocks, stalls)."""
    pids = {p.pid for p in tree.processes}
    processes = {p.pid: p for p in tree.processes}
    out = []
    for p in tree.processes:
        r = p.report
        if r is None or not completeness.runs_python(r):
            continue
        for t in r.threads:
            a = t.account
            if a is None or (pools.result_wait(t) is not None and _pool_workers(processes, p)):
                continue   # a Pool's result wait waits on the pool's workers, which the tree has looked at
            waits_on = a.pids or (_children_known(tree, p) if a.reason == AccountReason.CHILD else [])
            if a.state == ThreadState.UNACCOUNTED or \
                    (a.state == ThreadState.ELSEWHERE and a.reason != AccountReason.OWNER_GONE and
                     (not waits_on or not set(waits_on) <= pids)):
                out.append((p.pid, t.tid))
    return out


def outside(tree):
    """[OutsideWait] of the unaccounted threads (tree.unaccounted) that wait on processes outside
    the tree, each named: a socket's or pipe's other end held only by processes the tree does not hold (a
    server: a database, a cache, an upstream service), with what their own report says of those processes
    (its waits-on-process verdict's peers: command and process title).  The tree cannot look into them: the
    wait stays unaccounted (exit 4), said as a wait on that process."""
    pids = {p.pid for p in tree.processes}
    out = []
    for pid, tid in tree.unaccounted:
        entry = tree.process(pid)
        r = entry.report if entry is not None else None
        t = next((t for t in r.threads if t.tid == tid), None) if r is not None else None
        a = t.account if t is not None else None
        if a is None or a.state != ThreadState.ELSEWHERE or not a.pids or set(a.pids) & pids:
            continue
        peers = [p for v in r.verdicts if v.kind == VerdictKind.WAITS_ON_PROCESS
                 for w in v.facts.waits if w.tid == tid for p in w.peers or ()]
        out.append(OutsideWait(waiter=(pid, tid), pids=sorted(a.pids), peers=peers))
    return out


def _children_known(tree, entry):
    """[pid] of the children of process `entry` that a wait for any child (wait4(-1)) waits on,
    when the tree knows them all: those /proc listed (a live tree not cut short), or its core's
    record of them (pyhang gcore); else [] (a core of gdb's or the kernel's does not say)."""
    r = entry.report
    record = r.target.proc_record
    if record is not None:
        return [c.pid for c in record.children]
    if r.target.kind != "live" or tree.truncated:
        return []
    return [c.pid for c in _children({p.pid: p for p in tree.processes}, entry.pid)]

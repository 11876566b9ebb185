"""A wait across processes whose server died.  A worker that dies (killed:
the OOM killer, a signal, a crash) before it writes what its parent waits
for leaves the parent reading a pipe for ever: the workers still alive hold
the write end too, but each of them waits for its next piece of work, and
nothing is a cycle.  The dead worker stays in the tree as a zombie until
its parent reaps it (model.tree.ProcessExit: how it ended).

Seen from the tree: a thread waits, without a timeout, on a pipe or socket
whose other end only examined processes of the tree hold (its own process
among them, perhaps); no thread of theirs but the waiter may serve it now
(`_may_serve`: none runs, none waits for a time or for what a process
outside the tree may give); and a zombie child of the waiting process is
an expected server of that other end: its siblings hold it (they were made
alike, a pool's workers writing to their parent), or the waiting process
does and the child was killed by a signal (a fork child inherits its
parent's fds).  Only a child of the waiter: the workers of a pool also
hold the write ends of each other's task pipes, which their parent, not a
dead sibling, would have written.  Likely, never certain: a dead process's fds
cannot be read, so that it held the other end is inferred.
"""
from pyhang.model.kinds import AccountReason, Confidence, ServerEvidence, ThreadState, VerdictKind
from pyhang.model.report import Verdict
from pyhang.model.verdict_facts import DeadServer, ServedWait, ServerDiedFacts
from pyhang.model.waits import syscall_of

# Idle waits that end by themselves or by what anyone outside may give: such a thread may still serve.
_OPEN_IDLE = (AccountReason.TIMED, AccountReason.SELECTOR, AccountReason.LISTENER, AccountReason.TERMINAL)


def _may_serve(t, tree_pids):
    """Whether thread `t` (a ThreadReport of a holder) may end another's wait now: it runs, its wait ends by
    itself or by what a client or a process outside the tree may give, or pyhang cannot say what it waits on."""
    if t.blocked_on is None:
        return True
    a = t.account
    if a is None:
        return False
    if a.state in (ThreadState.RUNNING, ThreadState.UNACCOUNTED):
        return True
    if a.state == ThreadState.IDLE:
        return a.reason in _OPEN_IDLE
    if a.state == ThreadState.ELSEWHERE and a.reason != AccountReason.OWNER_GONE:
        return not a.pids or not set(a.pids) <= tree_pids
    return False


def expected(dead, waiter_pid, holders, processes):
    """(ServerEvidence, [sibling PIDs holding the other end]) when zombie `dead` (a ProcessEntry) is an
    expected server of the wait of process `waiter_pid` on an other end `holders` (PIDs) hold, else None."""
    if dead.parent_pid != waiter_pid:
        return None
    siblings = sorted(p.pid for p in processes.values()
                      if p.parent_pid == waiter_pid and p.pid != dead.pid and p.pid in holders)
    if siblings:
        return ServerEvidence.SIBLINGS_HOLD, siblings
    if waiter_pid in holders and dead.exit.signal is not None:
        return ServerEvidence.PARENT_HOLDS, []
    return None


def _served_wait(p, t, processes, tree_pids, or_may=False):
    """(wait facts, {dead pid: (evidence, siblings)}) of thread `t` of process `p` when its wait is one a dead
    child would have served and nothing left can (`or_may`: or something left may), else None."""
    if t.account is not None and t.account.state == ThreadState.IDLE:
        return None   # a wait with a timeout ends by itself
    s = syscall_of(t.blocked_on)
    obj = s.object
    if obj is None or obj.kind not in ("pipe", "socket") or not obj.holders or not obj.holders_complete:
        return None
    holders = {h.pid for h in obj.holders}
    entries = [processes.get(pid) for pid in sorted(holders)]
    if any(e is None or e.report is None or not e.report.threads for e in entries):
        return None   # a holder outside the tree, or not examined: it may serve
    if not or_may and any(_may_serve(x, tree_pids) for e in entries for x in e.report.threads
                          if (e.pid, x.tid) != (p.pid, t.tid)):
        return None
    dead = {}
    for z in processes.values():
        if z.exit is not None and z.report is None:
            found = expected(z, p.pid, holders, processes)
            if found is not None:
                dead[z.pid] = found
    if not dead:
        return None
    return ServedWait(tid=t.tid, syscall=s.name, fd=s.fd, kind=obj.kind, link=obj.link, holders=sorted(holders),
                      dead=sorted(dead)), dead


def verdicts(tree, explained=()):
    """[(pid, Verdict)]: the server-died verdicts of the tree's processes, one
    per process with such waits; `explained`: the (pid, tid) a deadlock
    already explains."""
    processes = {p.pid: p for p in tree.processes}
    tree_pids = set(processes)
    out = []
    for p in tree.processes:
        waits, dead = [], {}
        for t in p.report.threads if p.report is not None else ():
            if (p.pid, t.tid) in explained or t.blocked_on is None:
                continue
            found = _served_wait(p, t, processes, tree_pids)
            if found is not None:
                waits.append(found[0])
                dead.update(found[1])
        if not waits:
            continue
        out.append((p.pid, Verdict(kind=VerdictKind.SERVER_DIED, threads=[w.tid for w in waits],
                                   facts=ServerDiedFacts(
            pid=p.pid, waits=waits, confidence=Confidence.LIKELY,
            dead=[_dead_server(processes[pid], ev, siblings) for pid, (ev, siblings) in sorted(dead.items())]))))
    return out


def _dead_server(entry, evidence, siblings):
    """The DeadServer of process `entry` (a ProcessEntry that exited), most likely a server by `evidence`."""
    e = entry.exit
    return DeadServer(pid=entry.pid, parent_pid=entry.parent_pid, comm=entry.comm, wait_status=e.wait_status,
                      status=e.status, signal=e.signal, core_dumped=e.core_dumped, evidence=evidence,
                      siblings=siblings)


def maybe_lost(tree, explained=()):
    """[(pid, tid)] of the waits a dead child of the waiter would have served (as verdicts() finds them)
    while a live holder may still serve them (one sleeps, runs, or waits on what may come): not a hang pyhang
    can claim, nor an all-clear, since the process that served them is gone (analysis.tree.unaccounted)."""
    processes = {p.pid: p for p in tree.processes}
    tree_pids = set(processes)
    out = []
    for p in tree.processes:
        for t in p.report.threads if p.report is not None else ():
            if (p.pid, t.tid) in explained or t.blocked_on is None:
                continue
            if _served_wait(p, t, processes, tree_pids, or_may=True) is not None and \
                    _served_wait(p, t, processes, tree_pids) is None:
                out.append((p.pid, t.tid))
    return out

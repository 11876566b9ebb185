"""The words of the verdicts about other processes: a Pool's lost task, a
server that died, waits on processes a tree can or cannot look at, ranks of
a collective that diverged (render.verdicts says each verdict through them).
Sentences only: the analysis decided every fact they word."""
from pyhang.model.kinds import ServerEvidence
from pyhang.model.verdict_facts import ProcessPeer
from pyhang.render.account import LISTED as _LISTED, pids_text as _pids_text
from pyhang.render.exits import exit_text
from pyhang.render.locks import rank_text


def pool_task_lost_text(f, names):
    """"Thread 1 (LWP 7) of PID 7 waits for the result of a multiprocessing.Pool call … [likely: …]"."""
    waiters = ", ".join("%s (in %s, pool.py line %s)" % (names(w.tid), w.function, w.line) for w in f.waits)
    return ("in PID %d %s wait%s for the result of a multiprocessing.Pool call, and every worker of its pool (%s) "
            "waits for a task while none of the pool's threads runs: no task is in a worker's hands, so the one "
            "whose result is awaited was lost, most likely with a worker that died running it (killed by a signal "
            "or the OOM killer); Pool does not run it again [%s: a task could be on its way at this very moment]" % (
                f.pid, waiters, "s" if len(f.waits) == 1 else "",
                ", ".join("PID %d" % pid for pid in f.workers), f.confidence or "likely"))


def _dead_text(d):
    """"PID 9 (python3), a child of PID 7 like PIDs 8, 10, which hold the other end, was killed by signal 9
    (SIGKILL)"."""
    who = "PID %d%s" % (d.pid, " (%s)" % d.comm if d.comm else "")
    if d.evidence == ServerEvidence.SIBLINGS_HOLD:
        sib = d.siblings
        why = ", a child of PID %s like %s %s, which hold%s the other end," % (
            d.parent_pid, "PID" if len(sib) == 1 else "PIDs", ", ".join(str(p) for p in sib),
            "s" if len(sib) == 1 else "")
    else:
        why = ", a fork child of PID %s, which holds the other end," % d.parent_pid
    how = exit_text(d)
    return who + why + " " + ("was " + how if how.startswith("killed") else how)


def server_died_text(f, names):
    """"in PID 7 Thread 1 (LWP 7) waits in read on pipe:[5] …: PID 9 (python3), …, was killed by signal 9 …"."""
    dead = {d.pid: d for d in f.dead}
    parts = []
    for w in f.waits:
        others = [pid for pid in w.holders if pid != f.pid]
        held = ("%s%s" % (_pids_text(others), " and this process" if f.pid in w.holders else "")) \
            if others else "this process"
        parts.append("%s waits in %s on %s, whose other end is held by %s, where every thread but it waits "
                     "without a timeout on something else: %s and would most likely have served it" % (
                         names(w.tid), w.syscall or "a system call", w.link or "a " + w.kind,
                         held, " and ".join(_dead_text(dead[pid]) for pid in w.dead if pid in dead)))
    return "in PID %d %s; nothing left can end %s [%s: a dead process's fds cannot be read]" % (
        f.pid, "; ".join(parts), "this wait" if len(parts) == 1 else "these waits", f.confidence or "likely")


def _collective_part(w, names):
    c = w.collective
    if c.transport:
        return "%s waits in gloo's transport (%s) for the other ranks" % (names(w.tid), c.transport)
    ranks = rank_text(c.rank, c.world_size)
    return "%s waits in torch.distributed's %s%s for the other ranks" % (
        names(w.tid), c.function or "collective", " (%s)" % ", ".join(
            x for x in (c.backend, ranks) if x) if c.backend or ranks else "")


def _peer_text(p):
    """"PID 7 (redis-server)", or with the process title a server shows its state in: "PID 9 (postgres:
    postgres db 127.0.0.1(5012) UPDATE waiting)"."""
    what = p.title or p.comm
    return "PID %d (%s)" % (p.pid, what) if what else "PID %d" % p.pid


def _process_wait_part(w, names):
    if w.collective:
        return _collective_part(w, names)
    if w.syscall in ("wait4", "waitid", "vfork"):
        return "%s waits in %s for its child PID %d to %s" % (names(w.tid), w.syscall, w.pids[0],
                                                            "exec or exit" if w.syscall == "vfork" else "exit")
    peers = {p.pid: p for p in w.peers or ()}
    held = ", ".join(_peer_text(peers.get(pid) or ProcessPeer(pid=pid)) for pid in w.pids)
    if w.grpc:
        return "%s waits in a gRPC call with no deadline for the answer of its server at %s, which only %s " \
               "hold%s" % (names(w.tid), ", ".join(t or "?" for t in w.grpc.targets or ()) or "?", held,
                           "s" if len(w.pids) == 1 else "")
    if w.fd is None:
        return "%s waits in %s on fds whose other ends only %s hold%s" % (
            names(w.tid), w.syscall, held, "s" if len(w.pids) == 1 else "")
    return "%s waits in %s on fd %s (%s), whose other end only %s hold%s" % (
        names(w.tid), w.syscall, w.fd, w.link or "?", held, "s" if len(w.pids) == 1 else "")


def waits_on_process_text(f, names):
    """Threads waiting on a pipe or socket only other processes hold the
    other end of (with their commands, or the titles servers show their
    state in), for a child to exit, or for the other ranks in a distributed
    collective, and the command that examines them together."""
    parts = [_process_wait_part(w, names) for w in f.waits[:_LISTED]]
    more = " (and %d more threads)" % (len(f.waits) - _LISTED) if len(f.waits) > _LISTED else ""
    others = "the other ranks" if all(w.collective for w in f.waits) else "the other process"
    held = {pid for w in f.waits if not w.collective for pid in w.pids or ()}
    apart = [pid for pid in f.outside or () if pid in held]
    if apart and len(apart) == len(held):
        # no tree from here holds them: --tree would not look at them either
        return ("%s%s: whether that ends is up to %s, which no tree of processes from PID %d holds (started "
                "apart, as a server is); `pyhang report -p %s` reads %s when it runs Python, a server shows its "
                "own state (its log, its activity view)" % (
                    "; ".join(parts), more, ", ".join("PID %d" % pid for pid in apart), f.root,
                    apart[0] if len(apart) == 1 else "PID", "it" if len(apart) == 1 else "each"))
    tail = "; %s no tree from there holds" % ", ".join("PID %d" % pid for pid in apart) if apart else ""
    return ("%s%s: whether that ends is up to %s, which this report does not look at; "
            "`pyhang report --tree -p %d` examines them together and says whether they wait on each other%s"
            % ("; ".join(parts), more, others, f.root, tail))


def _ranks_text(members):
    """"ranks 1, 2 (PIDs 7, 8)", or "PIDs 7, 8" when a rank was not read."""
    pids = ("PID " if len(members) == 1 else "PIDs ") + ", ".join(str(m.pid) for m in members)
    if any(m.rank is None for m in members):
        return pids
    return "%s %s (%s)" % ("rank" if len(members) == 1 else "ranks", ", ".join(str(m.rank) for m in members), pids)


def diverged_ranks_text(f):
    """"rank 0 (PID 7) waits in barrier while ranks 1, 2 (PIDs 8, 9) wait in all_reduce": a
    collective-mismatch verdict's finding, the diverged ranks first."""
    groups = f.groups
    if f.odd:
        groups = groups[1:] + groups[:1]
    parts = ["%s wait%s in %s" % (_ranks_text(g.ranks), "s" if len(g.ranks) == 1 else "", g.function)
             for g in groups]
    return (" while " if len(parts) == 2 else "; ").join(parts)


def collective_mismatch_text(f):
    about = ", ".join(x for x in (f.backend, "world size %d" % f.world_size if f.world_size else "")
                      if x)
    return ("the ranks of one torch.distributed job wait in different collectives: %s%s; every rank must call the "
            "same collectives in the same order, so none of them can finish [%s: their sequence numbers are not "
            "read]" % (diverged_ranks_text(f), " (%s)" % about if about else "", f.confidence or "likely"))

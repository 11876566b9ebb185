"""Threads that wait for work, not on a hang: a thread parked in
Event.wait, Condition.wait or Queue.get, or a ThreadPoolExecutor worker
waiting for its next work item, that no other thread waits on (no edge
points at it: nobody joins it, nobody waits for something it holds).  The
main thread is never idle: when it waits, the program waits (for a
Pool.map's result, a server's stop event): its wait stays a finding --
but for a multiprocessing Pool worker's main thread waiting for its next
task (analysis.pools.waits_for_pool_work), which is what that process is
for; so are the pool's own threads waiting for results and exits.  Such
a thread is idle by design (a server's stop event, a pool between tasks);
400 of them are one line, not 400 blocked threads of unknown owner.

A Queue.get that nothing can fill is not idle: deadlocks.nothing_can_wake
says so first; nor is a thread running a gRPC server's handler (a request
in flight, whose client waits: grpc_calls.serving).  Everything else blocked without an owner stays the
owners-unknown verdict's: never a false all-clear.
"""
from pyhang.analysis import grpc_calls, pools, python_api
from pyhang.model.kinds import VerdictKind, WaitKind
from pyhang.model.report import Verdict
from pyhang.model.verdict_facts import IdleFacts, IdleWait

# Waits that anyone may end (set, notify, put): they have no owner to name.
WAITS_FOR_ANYONE = (WaitKind.PY_EVENT, WaitKind.PY_CONDITION, WaitKind.PY_QUEUE_GET)


def _pool_queue(t, snap):
    """The work queue `t` waits on for its next task, when it is a
    ThreadPoolExecutor worker waiting to get from its pool's queue: in the
    queue's own get (a queue.Queue, before 3.7), or with the worker loop
    as its innermost Python frame (it waits inside a SimpleQueue's C get);
    else None."""
    queue = snap.pool_worker.work_queue if snap is not None and snap.pool_worker is not None else None
    if not queue or not t.python_frames:
        return None
    if t.blocked_on.kind == WaitKind.PY_QUEUE_GET and t.blocked_on.address == queue:
        return queue
    f = t.python_frames[0]
    if f.function in python_api.WORKER[1] and (f.file or "").endswith(python_api.WORKER[0]):
        return queue
    return None


# multiprocessing's helper processes, whose loop reads requests from every process that holds the other end:
# waiting is what they do between requests (file, function of their innermost Python frame).
HELPER_LOOPS = (("multiprocessing/resource_tracker.py", "main"), ("multiprocessing/forkserver.py", "main"))


def helper_loop(t):
    """Whether thread `t` (a ThreadReport) is a helper process's loop
    waiting for its next request (HELPER_LOOPS): idle, never a stall."""
    f = t.python_frames[0] if t.python_frames else None
    return f is not None and any(f.function == fn and (f.file or "").endswith(path) for path, fn in HELPER_LOOPS)


def idle_waits(report, snapshots, taken=()):
    """[IdleWait]: the idle threads of `report`
    (`snapshots`: the ThreadSnapshots, for pool workers' queues; `taken`:
    TIDs another verdict already speaks of)."""
    pointed_at = {e.owner for e in report.edges}
    by_tid = {s.tid: s for s in snapshots}
    out = []
    main = report.target.namespace_pid or report.target.pid
    for t in report.threads:
        b = t.blocked_on
        if b is None or b.owners or t.tid in pointed_at or t.tid in taken or grpc_calls.serving(t) is not None:
            continue
        loop = pools.waits_for_pool_work(t)
        if loop is not None:
            out.append(IdleWait(tid=t.tid, kind=b.kind, address=b.address, name=None, work_queue=None,
                                pool_loop=loop))
            continue
        if t.tid == main:
            continue   # the main thread's wait is the program's (a Pool.map's result, a server's stop event)
        queue = _pool_queue(t, by_tid.get(t.tid))
        if queue is not None:
            out.append(IdleWait(tid=t.tid, kind=b.kind, address=b.address, name=None, work_queue=queue))
        elif b.kind in WAITS_FOR_ANYONE:
            out.append(IdleWait(tid=t.tid, kind=b.kind, address=b.address, name=b.name, work_queue=None))
    return out


def verdict(waits):
    """The idle verdict of `waits` (idle_waits), or None."""
    if not waits:
        return None
    return Verdict(kind=VerdictKind.IDLE, threads=[w.tid for w in waits], facts=IdleFacts(waits=waits))

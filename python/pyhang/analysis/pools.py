"""multiprocessing.Pool across a process tree: a result no worker will
produce.  When a worker dies while it runs a task (killed: the OOM killer,
a signal), Pool starts another in its place but never runs the task again,
and whoever waits for its result (Pool.map, ApplyResult.get) waits for
ever, with nothing in a cycle.  Seen from the tree: a thread of the parent
waits in Pool's result wait, and every worker of the pool waits for a task
(in the task queue's get, with no frame of a task on its stack) while none
of the pool's own threads runs: the task pipe is empty, no task is in a
worker's hands.  Likely, never certain: a task could be between the task
handler and the pipe at the very moment.
"""
from pyhang.model.kinds import Confidence, VerdictKind
from pyhang.model.report import Verdict
from pyhang.model.verdict_facts import PoolResultWait, PoolTaskLostFacts

POOL_FILE = "multiprocessing/pool.py"
# Where an idle worker waits for its next task: the queue's get, its lock, the connection's read (and the
# selector the worker handler's wait for a worker's exit polls through).
PLUMBING = ("multiprocessing/queues.py", "multiprocessing/connection.py", "multiprocessing/synchronize.py",
            "/selectors.py")
RESULT_WAITS = ("wait", "get")          # ApplyResult.wait / .get (MapResult's are ApplyResult's)
POOL_THREADS = ("_handle_tasks", "_handle_results", "_handle_workers")
# Frames of pool.py between a pool thread's loop and the plumbing it waits in.
_POOL_PLUMBING = ("_wait_for_updates",)


def _bare(function):
    return (function or "").rsplit(".", 1)[-1]


def _in_pool(f, functions):
    return (f.file or "").endswith(POOL_FILE) and _bare(f.function) in functions


def result_wait(t):
    """The Pool frame `t` waits for a result in, or None."""
    if t.blocked_on is None:
        return None
    return next((f for f in t.python_frames if _in_pool(f, RESULT_WAITS)), None)


def _waits_in_loop(t, loops):
    """The loop (the bare name of a function of pool.py among `loops`) whose frame thread `t` is blocked
    under with only multiprocessing's plumbing above it: waiting for what that loop hands on, in no task's
    frame; else None."""
    if t is None or t.blocked_on is None:
        return None
    for f in t.python_frames:   # innermost first: plumbing, then the loop (a thread's first other frame: None)
        if _in_pool(f, loops):
            return _bare(f.function)
        if not ((f.file or "").endswith(PLUMBING) or _in_pool(f, _POOL_PLUMBING)):
            return None
    return None


def waits_for_pool_work(t):
    """The loop ("worker", "_handle_results", "_handle_workers") in which thread `t` waits for work as a
    Pool's processes do between tasks: a worker's loop waiting for its next task (the worker process's main
    thread), or one of the pool's own threads waiting for a result or a worker's exit; else None.  Idle by
    design (analysis.idle)."""
    return _waits_in_loop(t, ("worker",) + POOL_THREADS)


def idle_worker(report):
    """Whether a process is a Pool worker waiting for its next task: its
    main thread runs Pool's `worker` loop and is blocked with only the task
    queue's plumbing above that loop (no task's frame)."""
    return _waits_in_loop(_main_thread(report), ("worker",)) is not None


def worker_handler_between_looks(t):
    """Whether thread `t` is a Pool's worker handler between two looks at its workers: Pool._handle_workers
    sleeping in its loop (time.sleep(0.1), Python 3.7 and before; from 3.8 it waits on the workers'
    sentinels, a poll the tree follows).  It only replaces a worker that exited: it writes no pipe and puts
    on no queue of theirs, so its sleep serves no other process's wait."""
    f = t.python_frames[0] if t.blocked_on is not None and t.python_frames else None
    return f is not None and _in_pool(f, ("_handle_workers",))


def workers_of(processes, pid):
    """The ProcessEntries among `processes` ({pid: entry}) that are Pool workers of process `pid`."""
    return [c for c in processes.values() if c.parent_pid == pid and c.report is not None and is_worker(c.report)]


def _main_thread(report):
    return report.thread(report.target.namespace_pid or report.target.pid) if report is not None else None


def is_worker(report):
    main = _main_thread(report)
    return main is not None and any(_in_pool(f, ("worker",)) for f in main.python_frames)


def _pool_busy(report):
    """Whether one of the pool's own threads runs (it may be handing a task or a result over)."""
    return any(t.blocked_on is None and any(_in_pool(f, POOL_THREADS) for f in t.python_frames)
               for t in report.threads)


def lost_tasks(tree):
    """[(pid, Verdict)]: the pool-task-lost verdicts of the tree's processes."""
    out = []
    for p in tree.processes:
        if p.report is None:
            continue
        waits = [(t, result_wait(t)) for t in p.report.threads]
        waits = [(t, f) for t, f in waits if f is not None]
        workers = [c for c in tree.processes if c.parent_pid == p.pid and c.report is not None and is_worker(c.report)]
        if not waits or not workers or _pool_busy(p.report) or not all(idle_worker(c.report) for c in workers):
            continue
        out.append((p.pid, Verdict(kind=VerdictKind.POOL_TASK_LOST, threads=[t.tid for t, _ in waits],
                                   facts=PoolTaskLostFacts(
                                       pid=p.pid, workers=[c.pid for c in workers],
                                       waits=[PoolResultWait(tid=t.tid, function=f.function, line=f.line) for t, f in waits],
                                       confidence=Confidence.LIKELY))))
    return out

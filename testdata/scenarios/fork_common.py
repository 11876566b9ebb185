"""Helpers of the scenarios: wait until a thread or another process sleeps
in a system call, start a thread that blocks, write small records from fork
children."""
import json
import os
import threading
import time

from truth import gettid, set_os_thread_name


def syscall_of(pid, tid=None):
    """(nr, first argument) the thread sleeps in, or None while it runs."""
    try:
        with open("/proc/%d/task/%d/syscall" % (pid, tid or pid)) as f:
            fields = f.read().split()
    except OSError:
        return None
    if not fields or fields[0] in ("running", "-1"):
        return None
    return int(fields[0]), int(fields[1], 16)


def wait_blocked(pid, tid=None, nr=202, timeout=10.0):
    """Waits until the thread sleeps in syscall `nr` (futex); its first argument."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = syscall_of(pid, tid)
        if s and s[0] == nr:
            time.sleep(0.05)
            if syscall_of(pid, tid) == s:
                return s[1]
        time.sleep(0.02)
    return None


def record(path, **info):
    with open(path + ".tmp", "w") as f:
        json.dump(info, f)
    os.rename(path + ".tmp", path)


def wait_records(paths, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(os.path.exists(p) for p in paths):
            out = []
            for p in paths:
                with open(p) as f:
                    out.append(json.load(f))
            return out
        time.sleep(0.02)
    raise SystemExit("fork scenario: children did not report: %s" % paths)


def start_blocked(truth, role, call, nr):
    """Run `call` in a thread named `role` (recorded in `truth` with its tid)
    and return its tid once it sleeps in system call `nr`."""
    tids = []
    ready = threading.Event()

    def run():
        set_os_thread_name(role)
        tids.append(gettid())
        truth.thread(tid=tids[0], name=role, role=role)
        ready.set()
        call()
    threading.Thread(target=run, name=role + "-py", daemon=True).start()
    ready.wait()
    if wait_blocked(os.getpid(), tids[0], nr=nr) is None:
        raise SystemExit("scenario: thread %s did not block in system call %d" % (role, nr))
    return tids[0]


def start_loader(ctx, worker_loop, count):
    """A DataLoader-style set of `count` fork workers (`ctx`: multiprocessing's fork context): one index
    queue each and one shared data queue, `worker_loop(index_queue, data_queue)` in each, as
    torch.utils.data.DataLoader lays them out; each worker is sent its index.  (data queue, index queues,
    workers): keep the index queues, whose pipes close when they are collected."""
    data_queue = ctx.Queue()
    index_queues, workers = [], []
    for _ in range(count):
        q = ctx.Queue()
        w = ctx.Process(target=worker_loop, args=(q, data_queue), daemon=True)
        w.start()
        index_queues.append(q)
        workers.append(w)
    for i, q in enumerate(index_queues):
        q.put(i)
    return data_queue, index_queues, workers

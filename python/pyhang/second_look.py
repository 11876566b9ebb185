"""The second look: whether the threads of a live process move.

One report is one moment: "owner unknown" is honest, but a user asked "is it
stuck?".  After the report's own look (and after gdb has let the process
go), two looks that never stop it, `interval` seconds apart, read per
thread what a thread that makes progress changes:

- its CPU time (utime + stime, /proc/PID/task/TID/stat),
- its voluntary and involuntary context switches (/proc/PID/task/TID/status:
  a thread asleep in one wait the whole time switches never),
- its system call and arguments (/proc/PID/task/TID/syscall),
- its Python frames (function, file, line: two reads of the interpreter's
  state through process_vm_readv, compared by the native state_moves).

Nothing is written to the process and nothing stops it.  The facts go to
the analysis as a SecondLook (model.report); analysis.progress says what
they mean for the report."""
import time

from pyhang import namespaces, procfs
from pyhang.model.kinds import ReaderFailure
from pyhang.model.report import SecondLook, ThreadLook

# Time for the threads a stop interrupted to sleep again in their calls (a
# timed futex wait resumes through restart_syscall) before the first look.
SETTLE = 0.05


def _sample(pid, hosts):
    """{host TID: (cpu ticks, (voluntary, involuntary) or None, syscall line or None)} of the threads that are
    there, from /proc."""
    out = {}
    for host in hosts:
        st = procfs.stat(pid, host)
        if st is None:
            continue
        out[host] = (st.get("cpu_ticks"), procfs.context_switches(pid, host), procfs.thread_syscall(pid, host))
    return out


def _interpreter(native, target):
    """A read of the interpreter's state (its threads' frames), or None when none can be read."""
    try:
        interp = native.Interpreter(target, digest_frames=True)   # only compared (state_moves)
        interp.status   # (reads it: the state, kept natively; no record of it is made)
        return interp
    except Exception:  # noqa: BLE001 — a process that runs no Python, or memory gone: no frames to compare
        return None


def _failure(exc, pid):
    """SecondLook.problem of a live target that could not be opened: the ReaderError's reason, path and
    number (a ReaderFailure's data, worded by render.target); anything else as the process gone."""
    reason = getattr(exc, "reason", None)
    if reason is None:
        return {"reason": ReaderFailure.NO_SUCH_PROCESS, "path": "/proc/%d" % pid, "number": pid}
    return {"reason": getattr(reason, "text", str(reason)), "path": getattr(exc, "path", ""),
            "number": getattr(exc, "number", 0)}


def _delta(a, b):
    return None if a is None or b is None else b - a


def look(pid, tids, interval, sleep=time.sleep):
    """SecondLook of the threads `tids` (as the report names them: the
    target's own TIDs) of live process `pid`, two looks `interval` s apart."""
    return look_many({pid: tids}, interval, sleep)[pid]


def look_many(targets, interval, sleep=time.sleep):
    """{pid: SecondLook} of live processes `targets` ({pid: [TID]}, as look's), looked at together: every
    first look, one interval, every second look (a tree's processes cost one interval, not one each)."""
    import _pyhang_native as native
    out, opened = {}, {}
    sleep(SETTLE)
    for pid, tids in targets.items():
        tids_map = namespaces.live_tids(pid)
        hosts = {tid: tids_map.to_host(tid) for tid in tids}
        try:
            target = native.Target.live(pid)
        except Exception as exc:  # noqa: BLE001 — gone, or no permission: said, never raised
            out[pid] = SecondLook(interval=interval, problem=_failure(exc, pid))
            continue
        opened[pid] = (hosts, target, _sample(pid, hosts.values()), _interpreter(native, target))
    if opened:
        sleep(interval)
    for pid, (hosts, target, first, before) in opened.items():
        target.invalidate()
        after = _interpreter(native, target) if before is not None else None
        out[pid] = _compared(hosts, first, _sample(pid, hosts.values()), before, after, interval, native)
    return out


def _compared(hosts, first, second, before, after, interval, native):
    """The SecondLook of one process from its two samples and two reads of its interpreter."""
    try:
        moved = set(native.state_moves(before, after).moved) if before is not None and after is not None else None
    except Exception:  # noqa: BLE001 — frames that cannot be compared are not said to have moved or not
        moved = None
    out = []
    for tid, host in hosts.items():
        a, b = first.get(host), second.get(host)
        if a is None:
            continue   # not there at the first look: nothing to compare
        if b is None:
            out.append(ThreadLook(tid=tid, gone=True))
            continue
        switches = [_delta(x, y) for x, y in zip(a[1], b[1])] if a[1] is not None and b[1] is not None \
            else [None, None]
        out.append(ThreadLook(tid=tid, cpu_ticks=_delta(a[0], b[0]), voluntary=switches[0], involuntary=switches[1],
                              syscall_changed=a[2] != b[2],
                              stack_moved=None if moved is None else tid in moved))
    return SecondLook(interval=interval, threads=out)

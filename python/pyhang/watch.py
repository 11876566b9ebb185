"""`pyhang watch -p PID`: a watchdog that never stops the process.

Every `interval` seconds a look reads what a stuck process keeps the same:
which threads it has (/proc/PID/task), each thread's system call record
(/proc/PID/task/TID/syscall: a thread blocked in a call keeps its call, its
arguments, its stack pointer and pc; one that runs reads `running`), and
its interpreter's Python frames (through process_vm_readv, compared by the
native state_moves: the function, file and line of every frame).  A look
that finds all of it as the look before did is *still*.

Still is not stuck: an idle server is still, and a thread spinning in one
line of Python or in C is still too (its record reads `running` at every
look), while a deadlock next to it never ends.  So a process still for
`after` seconds gets its report, taken as `pyhang report --no-stop -p PID`
takes it (its own look, its second look, the one analysis), and the report
decides: a report whose exit status names a problem ends the watch, with
that report and that status; one that accounts for every thread as running
or idle by design lets the watch go on, and the next report comes only once
the process has moved and stood still again.

Nothing is written to the process and nothing stops it.  A look of a process
of 256 threads, 50 Python frames each, costs about 4 ms of CPU: ten looks a
second take under a twentieth of a core (native/bench/goals.py, `watch`).

The loop (`run`) takes its looks, its report and its clock as arguments: the
unit tests drive it with synthetic looks (python/tests/test_watch_loop.py)."""
import time

from pyhang import procfs
from pyhang.model.kinds import ExitStatus
from pyhang.model.live_kinds import WatchEnd
from pyhang.model.record import record

@record
class Look:
    """What one look read of the process: its threads, each one's system call record (the line
    /proc gives, None when it could not be read), and a read of its interpreter (None: no Python
    read, or none could be)."""
    tids: list[int]
    calls: list[str | None]
    interpreter: object = None


@record
class WatchOutcome:
    """How a watch ended (model.kinds.WatchEnd), its exit status, and what it did: its looks, its
    reports (those that accounted for every thread and let it go on, then the one that ended it),
    the seconds it watched, and the seconds the process had stood still when the last report was
    taken (None: no report)."""
    end: str
    status: int
    looks: int = 0
    reports: int = 0
    seconds: float = 0.0
    still: float | None = None


class LiveLooks:
    """The looks of live process `pid` through `target` (a native live Target), with the native
    module's Interpreter and state_moves."""

    def __init__(self, native, target, pid):
        self.native, self.target, self.pid = native, target, pid

    def look(self):
        """A Look now, or None when the process is gone (or a zombie: its threads are gone)."""
        st = procfs.stat(self.pid)
        if st is None or st.get("state") in ("Z", "X"):
            return None
        tids = procfs.task_ids(self.pid)
        if not tids:
            return None
        calls = [procfs.syscall_line(self.pid, t) for t in tids]
        self.target.invalidate()   # memory read afresh, every look
        return Look(tids=tids, calls=calls, interpreter=self._interpreter())

    def _interpreter(self):
        try:
            interp = self.native.Interpreter(self.target, digest_frames=True)   # only compared (state_moves)
            interp.status   # (reads the state, kept natively: no record of it is made)
            return interp
        except Exception:  # noqa: BLE001 — no Python, or its memory moved under the read: threads and calls alone
            return None

    def same(self, a, b):
        """Whether look `b` finds the process as look `a` did."""
        if a.tids != b.tids or a.calls != b.calls or (a.interpreter is None) != (b.interpreter is None):
            return False
        if a.interpreter is None:
            return True
        try:
            return not self.native.state_moves(a.interpreter, b.interpreter).moved
        except Exception:  # noqa: BLE001 — frames that cannot be compared are not said to be still
            return False


def run(looks, report, interval, after, limit=None, clock=time.monotonic, sleep=time.sleep, on_report=None):
    """The watch, a look every `interval` s and a report once the process stood still `after` s: a
    WatchOutcome.  `looks` has look() (a Look, or None when the process is gone)
    and same(a, b); `report()` takes the process's report and returns its exit status (having
    printed nothing: the caller prints it when the watch ends on it); `limit`: seconds to watch at
    most (None: until the process ends or a report names a problem); `on_report(status, still)`
    is told of each report that let the watch go on."""
    w = WatchOutcome(end=WatchEnd.INTERRUPTED, status=ExitStatus.OK)
    start = clock()
    try:
        _watch(w, looks, report, interval, after, limit, clock, sleep, on_report, start)
    except KeyboardInterrupt:   # ^C: the user's end, said as one (w.end stays INTERRUPTED)
        pass
    w.seconds = clock() - start
    return w


def _watch(w, looks, report, interval, after, limit, clock, sleep, on_report, start):
    """run's loop, counting into `w` and setting its end."""
    before, before_at = looks.look(), start
    w.looks = 1
    still_since, reported = None, False
    while True:
        if before is None:
            w.end = WatchEnd.EXITED
            return
        if limit is not None and clock() - start >= limit:
            w.end = WatchEnd.LIMIT
            return
        sleep(max(0.0, before_at + interval - clock()))   # a look every `interval` s, whatever a look costs
        now_at = clock()   # (a look's time is when it began)
        now = looks.look()
        w.looks += 1
        if now is None:
            before = None
            continue
        if not looks.same(before, now):
            still_since, reported = None, False
        else:
            if still_since is None:
                still_since = before_at   # still since the look this one repeats
            if not reported and now_at - still_since >= after:
                status = report()
                w.reports += 1
                w.still = now_at - still_since
                if status != ExitStatus.OK:
                    w.end = WatchEnd.NOT_READ if status == ExitStatus.FAILED else WatchEnd.PROBLEM
                    w.status = status
                    return
                reported = True   # idle by design: the next report once it has moved and stood still again
                if on_report is not None:
                    on_report(status, w.still)
        before, before_at = now, now_at

"""A target in another PID namespace (a container, `unshare --pid`): the
TIDs gdb lists are the host's, the TIDs the program records in its own
memory (thread states, lock owners, threading.Thread._native_id) are its
namespace's.  pyhang speaks the target's own TIDs, the ones its logs and
`threading.get_native_id()` show, and keeps the host's beside them.

Live, the kernel says both (/proc/PID/task/TID/status, NSpid: host first,
innermost namespace last).  A core records the host's TIDs only; each
thread's struct pthread (its fs_base) holds the TID its namespace gave it.
gdb's libthread_db reads those too and lists each thread a second time
under its namespace TID, with no registers: those are not threads.
"""
import os


class Tids:
    """host TID → the target's own TID, and back; identity outside a namespace."""

    def __init__(self, own=None, pid=None, threads=None):
        self.own = dict(own or {})             # only the TIDs that differ
        self.host = {v: k for k, v in self.own.items()}
        self.pid = pid                         # the process's own pid in its namespace, when it differs
        self.threads = threads                 # the host TIDs of a core's threads, when gdb may list others

    def listed_twice(self, host_tid):
        """Whether gdb's thread `host_tid` is a core's thread listed again
        under its namespace TID (libthread_db), not a thread of its own."""
        return bool(self.own) and self.threads is not None and host_tid not in self.threads

    def __bool__(self):
        return bool(self.own)

    def to_target(self, host_tid):
        return self.own.get(host_tid, host_tid)

    def to_host(self, tid):
        return self.host.get(tid, tid)


def _nspid(path):
    """The NSpid line of a /proc status file as ints, or None."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return [int(x) for x in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return None


def live_tids(pid, max_threads=1 << 16):
    """Tids of a live process from /proc (read only; bounded)."""
    process = _nspid("/proc/%d/status" % pid)
    if process is not None and len(process) == 1:
        # The threads of a process share its PID namespace: in the host's own,
        # no thread has another TID, and its threads' files need no reading.
        return Tids()
    try:
        tasks = os.listdir("/proc/%d/task" % pid)[:max_threads]
    except OSError:
        return Tids()
    own = {}
    for name in tasks:
        ids = _nspid("/proc/%d/task/%s/status" % (pid, name))
        if ids and len(ids) > 1 and ids[-1] != ids[0]:
            own[ids[0]] = ids[-1]
    return Tids(own, process[-1] if own and process and len(process) > 1 else None)


def core_tids(threads, pthread_tid, pid=None):
    """Tids of a core: `threads` is [(host TID, fs_base)], `pthread_tid` maps
    a struct pthread address to the TID it records (None when unreadable).
    A namespace is concluded only when every thread's own TID is read, they
    are distinct, and not all equal the host's: anything less is no
    evidence, and the host's TIDs stay."""
    own = {}
    for host, base in threads:
        tid = pthread_tid(base) if base else None
        if tid is None:
            return Tids()
        own[host] = tid
    if len(set(own.values())) != len(own) or all(h == t for h, t in own.items()):
        return Tids()
    return Tids({h: t for h, t in own.items() if h != t}, own.get(pid) if pid in own else None, set(own))

"""Scenario: a knot of OR-waits across processes.  The parent makes three
pipes and forks three readers; reader i reads pipe i, and each reader holds
the write ends of all three pipes, which nobody else holds (the parent
closes its copies).  Each read could be ended by either of the two other
readers, and each of them is reading too: one deadlock of three processes,
whose three pipe waits each have two possible servers.  The parent waits
for any child to exit (os.wait): it hangs off the knot, not in it.

  knot   as above
  free   a fourth child holds the write ends of the three pipes too, and
         wakes every half second (as a writer that sends now and then
         does): it could write to any of them, so there is no deadlock
  asleep the same fourth child sleeps an hour at a time: until it wakes
         nothing can end the reads, a likely deadlock that names it

Truth: the parent's PID (its main thread, role "parent"), "readers": [{pid,
tid, link}] (link: the pipe it reads, "pipe:[N]"), "free": the fourth
child's PID or null, "mode".  Works on every Python from 3.6 on.
usage: pipe_knot.py knot|free|asleep"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[1] if len(sys.argv) > 1 else "knot"


def main():
    set_os_thread_name("knot-parent")
    pipes = [os.pipe() for _ in range(3)]
    readers = []
    for i in range(3):
        pid = os.fork()
        if pid == 0:
            set_os_thread_name("knot-reader")
            for j, (r, w) in enumerate(pipes):
                if j != i:
                    os.close(r)   # keeps every write end, and only its own read end
            os.read(pipes[i][0], 1)
            os._exit(0)
        readers.append({"pid": pid, "tid": pid, "link": os.readlink("/proc/self/fd/%d" % pipes[i][0])})
    free = None
    if MODE in ("free", "asleep"):
        free = os.fork()
        if free == 0:
            set_os_thread_name("knot-free")
            for r, _ in pipes:
                os.close(r)       # a writer of every pipe, which could write whenever it wakes
            while True:
                time.sleep(0.5 if MODE == "free" else 3600)
    for r, w in pipes:
        os.close(r)
        os.close(w)
    TRUTH.thread(tid=gettid(), name="knot-parent", role="parent")
    TRUTH.write_and_signal_ready(mode=MODE, readers=readers, free=free)
    os.wait()


main()

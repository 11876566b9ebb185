"""Scenario (a DataLoader-style parent whose worker was killed): the parent
forks three workers (multiprocessing's fork Process), sends each an index
on its own index queue and waits for the results on one result queue, as
torch.utils.data.DataLoader lays out its workers, but with a plain get()
(no timeout, no check that the workers live).  The worker given index 1
kills itself with SIGKILL (as the OOM killer would) before it puts its
result; nobody joins it, so it stays a zombie.  The parent reads the result
pipe for ever: the other workers, which hold its write end too (as does the
parent, whose Queue keeps both ends), wait for their next index, and the
parent's other threads (the index queues' feeders) wait for something to
send.  No cycle: a wait whose server died (`server-died`).

  killed    as above
  sleeper   the same, but worker 2 sleeps an hour in its task before it puts
            its result: a live holder of the result pipe whose wait ends by
            itself, so nothing says the parent's wait lost its server

Truth: the parent's main thread (role "main"; it parks in read), "workers":
the live workers' [{pid, tid}], "killed": the killed worker's PID,
"signal": the signal that killed it, "result_link": the result pipe
("pipe:[N]"), "mode".
usage: loader_worker_killed.py killed|sleeper"""
import multiprocessing
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402

TRUTH = Truth()
MODE = sys.argv[1] if len(sys.argv) > 1 else "killed"
KILLED, SLEEPER = 1, 2


def worker_loop(index_queue, result_queue):
    set_os_thread_name("loader-worker")
    while True:
        index = index_queue.get()
        if index == KILLED:
            os.kill(os.getpid(), signal.SIGKILL)
        if index == SLEEPER and MODE == "sleeper":
            result_queue.put((index, os.getpid(), gettid(), "sleeping"))
            time.sleep(3600)
        result_queue.put((index, os.getpid(), gettid(), "done"))


def state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def main():
    set_os_thread_name("loader-parent")
    # (the index queues are kept: their pipes would close with them)
    result_queue, index_queues, workers = fork_common.start_loader(  # noqa: F841
        multiprocessing.get_context("fork"), worker_loop, 3)
    live = {}
    while len(live) < 2:   # the two results that come (the sleeper's says it sleeps)
        index, pid, tid, _ = result_queue.get()
        live[index] = {"pid": pid, "tid": tid}
    killed = workers[KILLED].pid
    while state(killed) != "Z":
        time.sleep(0.01)
    TRUTH.thread(tid=gettid(), name="loader-parent", role="main")
    TRUTH.write_and_signal_ready(mode=MODE, workers=[live[i] for i in sorted(live)], killed=killed,
                                 signal=int(signal.SIGKILL),
                                 result_link=os.readlink("/proc/self/fd/%d" % result_queue._reader.fileno()))
    result_queue.get()   # the killed worker's result: never


main()

"""A multiprocessing.Pool's worker handler in a process tree: up to Python 3.7 it sleeps 0.1 s between two
looks at its workers (Pool._handle_workers), from 3.8 it waits on their sentinels.  Either way it only
replaces a worker that exited: its sleep serves no pipe of theirs, so it does not untie a knot of the
parent and workers that wait on each other (process_tree.py pool on 3.6 said "No deadlock found", exit 0).
Synthetic trees (the facts a tree report reads)."""
from pyhang.analysis import tree as tree_analysis
from pyhang.analysis.syscall_names import NAMES
from pyhang.model.files import FdHolder, FdObject
from pyhang.model.kinds import Confidence, GilState, WaitKind
from pyhang.model.report import BlockedOn, PythonFrame, Report, TargetInfo, ThreadReport
from pyhang.model.tree import ProcessEntry, TreeReport
from pyhang.model.waits import SyscallWait

NUMBERS = {name: nr for nr, name in NAMES.items()}
POOL_PY = "/root/.pyenv/versions/3.6.15/lib/python3.6/multiprocessing/pool.py"


def _thread(tid, call, frames, **facts):
    s = SyscallWait(name=call, number=NUMBERS[call], fd_table=True, watches_fds="fds" in facts, **facts)
    return ThreadReport(tid=tid, gdb_num=1, gil=GilState.RELEASED,
                        blocked_on=BlockedOn(kind=WaitKind.SYSCALL, confidence=Confidence.CERTAIN, syscall=s),
                        python_frames=[PythonFrame(function=f, file=p, line=1) for p, f in frames])


def _process(pid, parent, *threads):
    report = Report(target=TargetInfo(kind="live", pid=pid, parent_pid=parent, python_version="3.6.15"),
                    threads=list(threads))
    return ProcessEntry(pid=pid, parent_pid=parent, report=report, comm="python3")


def _pipe(link, *pids):
    return FdObject(kind="pipe", link=link, access="read",
                    holders=[FdHolder(pid=p, comm="python3", fds=[4]) for p in pids])


def _tree(handler_frames):
    # the parent: its result handler reads the workers' result pipe, its worker handler sleeps in its loop;
    # each worker, inside a task, reads a pipe only the parent and the other worker could write
    parent = _process(100, 1,
                      _thread(101, "read", [(POOL_PY, "_handle_results")], fd=5, object=_pipe("pipe:[8]", 200, 300)),
                      _thread(102, "select", handler_frames))
    workers = [_process(pid, 100, _thread(pid, "read", [("/srv/task.py", "stuck_task"), (POOL_PY, "worker")], fd=3,
                                          object=_pipe("pipe:[7]", 100, other)))
               for pid, other in ((200, 300), (300, 200))]
    return tree_analysis.analyse(TreeReport(root_pid=100, processes=[parent] + workers))


def test_a_pool_worker_handler_sleeping_between_looks_unties_no_knot_of_its_parent_and_workers():
    tree = _tree([(POOL_PY, "_handle_workers")])
    (d,) = tree.deadlocks
    assert d.pids == [100, 200, 300] and tree.exit_status == 3
    # its wait is on the workers' exit (any one of them), read from its frames: likely
    handler = [e for e in d.edges if e.waiter == (100, 102)]
    assert {e.owner for e in handler} == {(200, 200), (300, 300)}
    assert {(e.kind, e.confidence) for e in handler} == {("child-exit", Confidence.LIKELY)}


def test_any_other_sleeping_thread_of_the_parent_could_still_write_and_makes_no_deadlock():
    tree = _tree([("/srv/app.py", "housekeeping")])
    assert tree.deadlocks == []

"""analysis.forks.is_child: the collection asks it before reading the large
containers of every module (a fork child is the one process they matter in),
so it must agree with analyse() on every kind of evidence."""
import pytest

from pyhang.analysis.forks import analyse, is_child
from pyhang.model.fork_facts import ForkFacts
from pyhang.model.record import from_data
from pyhang.model.report import PythonFrame, Report, TargetInfo, ThreadReport


def report(*stacks):
    r = Report(target=TargetInfo(kind="live", pid=100))
    for tid, frames in enumerate(stacks, start=100):
        r.threads.append(ThreadReport(tid=tid, gdb_num=tid - 99, python_frames=[PythonFrame(*f) for f in frames]))
    return r


LAUNCH = [("worker", "/app/w.py", 3), ("BaseProcess._bootstrap", "/usr/lib/python3.11/multiprocessing/process.py", 314),
          ("Popen._launch", "/usr/lib/python3.11/multiprocessing/popen_fork.py", 71),
          ("<module>", "/app/main.py", 9)]
PLAIN = [("serve", "/app/server.py", 40), ("<module>", "/app/server.py", 60)]
# The parent's thread still in os.fork (an at-fork handler of a library waits): _launch, no _bootstrap inside it
FORKING = [("Popen._launch", "/usr/lib/python3.11/multiprocessing/popen_fork.py", 66),
           ("BaseProcess.start", "/usr/lib/python3.11/multiprocessing/process.py", 121),
           ("<module>", "/app/main.py", 9)]

CASES = {
    "nothing": (report(PLAIN), {}),
    "proc: same address space as the parent": (
        report(PLAIN), {"process": {"same_address_space": True, "ppid": 7, "exe": "/usr/bin/python3", "parent_exe": "/usr/bin/python3", "mapped": {"exe": 4194304, "libc": 140000000000000, "heap": 0}, "parent_mapped": {"exe": 4194304, "libc": 140000000000000, "heap": 0}}}),
    "proc: another program": (report(PLAIN), {"process": {"same_address_space": False, "ppid": 7}}),
    "multiprocessing: a forked process object": (
        report(PLAIN), {"python": {"current_process_type": "ForkProcess", "parent_pid": 7}}),
    "multiprocessing: the main process": (report(PLAIN), {"python": {"current_process_type": "_MainProcess"}}),
    "fork bootstrap frames": (report(PLAIN, LAUNCH), {}),
    "the parent inside os.fork in _launch": (report(PLAIN, FORKING), {}),
    "descriptors of threads that ran at fork": (report(PLAIN), {"descriptors": [{"address": 1, "exited": False}]}),
    "descriptors of exited threads only": (report(PLAIN), {"descriptors": [{"address": 1, "exited": True}]}),
}


# The cases whose evidence makes a fork child (each kind alone); the others make none.
CHILDREN = {"proc: same address space as the parent", "multiprocessing: a forked process object",
            "fork bootstrap frames", "descriptors of threads that ran at fork"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_analysis_and_the_collections_early_question_both_give_each_cases_answer(case):
    rep, facts = CASES[case][0], from_data(ForkFacts, CASES[case][1])
    want = case in CHILDREN
    assert analyse(rep, facts).child is want and is_child(rep, facts) is want


# A fork child (same address space as its parent) whose parent has 3 threads now.
PARENT_NOW = {"same_address_space": True, "ppid": 7, "parent_threads": [7, 8, 9], "parent_thread_names": ["a", "b", "c"]}


@pytest.mark.parametrize("facts, hazard", [
    # the child's memory searched, no descriptor of a thread that ran at fork: the parent started them after
    ({"mappings_scanned": 12, "process": PARENT_NOW}, None),
    ({"mappings_scanned": 12, "process": PARENT_NOW, "descriptors": [{"address": 1, "exited": True}]}, None),
    # a descriptor of a thread that ran at fork: certain, whatever the parent has now
    ({"mappings_scanned": 12, "process": dict(PARENT_NOW, parent_threads=[7]),
      "descriptors": [{"address": 1, "exited": False}]}, "certain"),
    # the descriptors not searched, or not readable: the parent's threads now are the only evidence: likely
    ({"mappings_scanned": 0, "process": PARENT_NOW}, "likely"),
    ({"mappings_scanned": 12, "process": PARENT_NOW, "descriptor_issue": {"kind": "no-thread-list"}}, "likely"),
], ids=["parent-threads-later", "only-exited-ones", "ran-at-fork", "not-searched", "unreadable"])
def test_threads_at_fork_come_from_the_childs_memory_and_the_parents_threads_now_only_when_it_cannot_be_read(
        facts, hazard):
    found = [h for h in analyse(report(PLAIN), from_data(ForkFacts, facts)).hazards if h.kind == "threads-at-fork"]
    assert [h.confidence for h in found] == ([hazard] if hazard else [])

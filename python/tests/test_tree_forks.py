"""Fork facts across a process tree, without gdb, on synthetic per-process
reports: a fork child's lock whose owner is a parent thread names it; a
Python lock a child waits on is asked of its parent (only then), and the
parent's threads referencing it are named unless the address was freed,
reused or unlocked; an RLock's pthread_t owner is matched in the parent; a
child in libgomp waits for pool threads only the parent has; the memory
children copy is summed at the parent; garbage gives no crash."""
import json

import harness
from pyhang.analysis import tree as tree_analysis
from pyhang.analysis import tree_forks
from pyhang.model.kinds import Confidence, GilState, HazardKind, WaitKind
from pyhang.model.lock_objects import LockObject
from pyhang.model.report import BlockedOn, ForkAnalysis, Hazard, NativeFrame, ThreadReport
from pyhang.model.record import from_data
from pyhang.model.tree import ProcessEntry, TreeReport
from pyhang.model.waits import GlibcLock, PythonLockDetail
from pyhang.render.tree import render_tree_text, tree_json
from test_tree import analyse, process

# ---- fork facts across the tree -------------------------------------------

def fork_child(entry, *hazards, checked=()):
    entry.report.fork_analysis = ForkAnalysis(child=True, hazards=list(hazards), checked=list(checked))
    entry.report.fork_hazards = list(hazards)
    return entry


def mutex_wait(tid, owner, flags=()):
    return ThreadReport(tid=tid, gdb_num=1, gil=GilState.RELEASED,
                        blocked_on=BlockedOn(kind=WaitKind.MUTEX, address=0x1000, library="/x/libfix.so",
                                             owners=[owner], glibc=GlibcLock(kind="mutex", flags=list(flags))))


def owner_gone(tid, owner):
    return Hazard(HazardKind.ORPHANED_LOCK, [tid], Confidence.CERTAIN, "owner-gone",
                  {"thread": tid, "kind": "mutex", "address": 0x1000, "library": "/x/libfix.so", "gone": [owner],
                   "internal": None, "child": True})


def named(tid, num, name, *frames):
    return ThreadReport(tid=tid, gdb_num=num, name=name, gil=GilState.RELEASED,
                        native_frames=[NativeFrame(pc=1, library=lib) for lib in frames])


def tree_hazards(tree, kind):
    return [(pid, h) for pid, h in tree.fork_hazards if h.kind == kind]


def test_a_child_lock_owned_by_a_parent_thread_names_the_parents_thread():
    # GIVEN a fork child waiting on a mutex whose owner LWP 101 is a thread of its parent
    parent = process(100, 1, named(100, 1, "main"), named(101, 2, "holder"))
    child = fork_child(process(200, 100, mutex_wait(200, 101)), owner_gone(200, 101))
    tree = analyse(parent, child)
    # THEN the tree's hazard says so, naming the parent's thread, and replaces the child's own
    ((pid, h),) = tree_hazards(tree, HazardKind.ORPHANED_LOCK)
    assert pid == 200 and h.variant == "parent-thread" and h.threads == [200]
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    (j,) = doc["fork_hazards"]
    assert j["processes"] == [200, 100] and j["confidence"] == "certain"
    assert ('its owner LWP 101 is not alive in this process: it is Thread 2 (LWP 101) "holder" of the parent '
            'PID 100 (python3), which held the lock when the parent forked') in j["evidence"]
    text = render_tree_text(tree)
    assert "Fork hazards across processes:\n[orphaned-lock] PID 200 Thread 1 (LWP 200) (certain)" in text
    # the child's own report keeps its own hazard
    assert child.report.fork_hazards[0].variant == "owner-gone"


def test_a_lock_owner_in_the_parent_is_not_claimed_when_it_cannot_be_a_fork_copy():
    # a process-shared mutex: the parent's thread may hold it now; a child not forked; the parent not examined
    for parent, child in (
            (process(100, 1, named(101, 2, "holder")),
             fork_child(process(200, 100, mutex_wait(200, 101, flags=["pshared"])), owner_gone(200, 101))),
            (process(100, 1, named(101, 2, "holder")), process(200, 100, mutex_wait(200, 101))),
            (ProcessEntry(pid=100, parent_pid=1, problem="gone"),
             fork_child(process(200, 100, mutex_wait(200, 101)), owner_gone(200, 101))),
            (process(100, 1, named(102, 2, "other")),
             fork_child(process(200, 100, mutex_wait(200, 101)), owner_gone(200, 101)))):
        if child.report.fork_analysis is None:
            child.report.fork_hazards = [owner_gone(200, 101)]
        tree = analyse(parent, child)
        assert all(h.variant == "owner-gone" for _, h in tree.fork_hazards)
        assert "Fork hazards across processes" not in render_tree_text(tree)


def test_a_child_blocked_in_libgomp_waits_for_pool_threads_that_live_only_in_the_parent():
    gomp = "/usr/lib/x86_64-linux-gnu/libgomp.so.1"
    parent = process(100, 1, named(100, 1, "main"), named(101, 2, "main", "/x/libc.so.6", gomp),
                     named(102, 3, "main", gomp))
    child = fork_child(process(200, 100, named(200, 1, "main", gomp)),
                       Hazard(HazardKind.OPENMP_AFTER_FORK, [200], Confidence.CERTAIN, "",
                              {"library": gomp, "pool": 2, "pool_example": None, "inside": [200]}))
    tree = analyse(parent, child)
    ((pid, h),) = tree_hazards(tree, HazardKind.OPENMP_AFTER_FORK)
    assert pid == 200 and h.variant == "parent-pool" and h.confidence == Confidence.CERTAIN
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    ev = doc["fork_hazards"][0]["evidence"]
    assert ("Thread 1 (LWP 200) is blocked inside libgomp.so.1 waiting for the OpenMP pool's threads; they exist "
            "only in the parent PID 100 (python3), where 2 pool threads are alive (Thread 2 (LWP 101) \"main\", "
            "Thread 3 (LWP 102) \"main\")") in ev
    # a parent with no pool thread left: the child's own hazard stays
    alone = analyse(process(100, 1, named(100, 1, "main")), child)
    assert [h.variant for _, h in alone.fork_hazards] == [""]


def rollup(dirty, shared):
    return {"Rss": dirty + shared, "Pss": dirty + shared // 2, "Private_Dirty": dirty, "Shared_Clean": shared,
            "Shared_Dirty": 0}


def test_fork_children_copying_the_parents_memory_are_summed_up_at_the_parent():
    big = {"where": "__main__.DATA", "type": "list", "length": 400000, "estimated_bytes": 38 << 20,
           "address": 0x7f0000}
    cow = Hazard(HazardKind.COW_REFCOUNT, [], Confidence.LIKELY, "",
                 {"smaps_rollup": rollup(30 << 10, 10 << 10), "containers": [big]})
    c1 = fork_child(process(200, 100, named(200, 1, "w")), cow,
                    checked=[("cow", {"smaps_rollup": rollup(30 << 10, 10 << 10), "containers": 1})])
    c2 = fork_child(process(300, 100, named(300, 1, "w")),
                    checked=[("cow", {"smaps_rollup": rollup(2 << 10, 30 << 10), "containers": 0})])
    tree = analyse(process(100, 1, named(100, 1, "main")), c1, c2)
    hs = tree_hazards(tree, HazardKind.COW_REFCOUNT)
    assert [(pid, h.variant) for pid, h in hs] == [(200, ""), (100, "children")]
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    j = doc["fork_hazards"][-1]
    assert j["pid"] == 100 and j["processes"] == [100, 200, 300] and j["threads"] == []
    assert j["evidence"].startswith("2 fork children of this process hold 32.0 MB of private dirty memory, copied from it "
                                    "or written since fork (smaps_rollup Private_Dirty: PID 200 30.0 MB (shares 10.0 MB), "
                                    "PID 300 2.0 MB")
    assert "PID 200 reads large builtin containers inherited from this process" in j["evidence"]
    assert "__main__.DATA: list of 400000 items, ~38.0 MB" in j["evidence"]
    # no child reading large containers (or no smaps: cores): nothing at the parent
    quiet = analyse(process(100, 1, named(100, 1, "main")), fork_child(process(300, 100, named(300, 1, "w")),
                    checked=[("cow", {"smaps_rollup": rollup(2 << 10, 30 << 10), "containers": 0})]))
    assert quiet.fork_hazards == []


def test_garbage_fork_facts_across_the_tree_give_no_crash():
    odd = fork_child(process(200, 100, named(200, 1, None)),
                     Hazard(HazardKind.ORPHANED_LOCK, [200], Confidence.CERTAIN, "owner-gone", {}),
                     Hazard(HazardKind.OPENMP_AFTER_FORK, [], Confidence.LIKELY, "", {}),
                     checked=[("cow", None), ("cow", {"smaps_rollup": {}})])
    tree = analyse(process(100, 1, named(100, 1, None)), odd, process(300, 200))
    # nothing concluded across processes from them: the child's own two stay as they are
    assert [h.variant for _, h in tree.fork_hazards] == ["owner-gone", ""]


LOCK = 0x7f0000001000


def py_lock_wait(tid, address=LOCK):
    return ThreadReport(tid=tid, gdb_num=1, gil=GilState.RELEASED,
                        blocked_on=BlockedOn(kind=WaitKind.PY_LOCK, address=address, python=PythonLockDetail()))


def python_lock(tid, address=LOCK, kind=WaitKind.PY_LOCK):
    return Hazard(HazardKind.ORPHANED_LOCK, [tid], Confidence.LIKELY, "python-lock",
                  {"thread": tid, "kind": kind, "address": address, "lost": 1})


def in_parent(address=LOCK, type_name="_thread.lock", alive=True, locked=True, refcount=3, tids=(101,)):
    refs = [{"tid": t, "function": "holder", "file": "/srv/app.py", "line": 27} for t in tids]
    return {address: from_data(LockObject, {"object": address, "type_name": type_name, "refcount": refcount,
                                            "alive": alive, "locked": locked, "owner_thread_id": None,
                                            "references": refs})}


def lock_tree(objects, parent_threads=None, child_kind=WaitKind.PY_LOCK):
    parent = process(100, 1, *(parent_threads or (named(100, 1, "main"), named(101, 2, "lock-holder"))))
    child = fork_child(process(200, 100, py_lock_wait(200)), python_lock(200, kind=child_kind))
    parent.lock_objects = objects
    return TreeReport(root_pid=100, processes=[parent, child])


def test_only_parents_of_children_waiting_on_a_lock_with_no_owner_are_asked_again():
    # GIVEN a fork child waiting on a threading.Lock that records no owner: its parent is asked about that address
    assert tree_forks.lock_objects_wanted(lock_tree(None)) == {100: [LOCK]}
    # the common tree (a child's mutex owned by a parent thread; no fork child; the parent not examined): nobody
    parent = process(100, 1, named(100, 1, "main"), named(101, 2, "holder"))
    owned = fork_child(process(200, 100, mutex_wait(200, 101)), owner_gone(200, 101))
    assert tree_forks.lock_objects_wanted(TreeReport(root_pid=100, processes=[parent, owned])) == {}
    not_forked = process(200, 100, py_lock_wait(200))
    not_forked.report.fork_hazards = [python_lock(200)]
    assert tree_forks.lock_objects_wanted(TreeReport(root_pid=100, processes=[parent, not_forked])) == {}
    orphan = fork_child(process(200, 7, py_lock_wait(200)), python_lock(200))
    assert tree_forks.lock_objects_wanted(TreeReport(root_pid=100, processes=[parent, orphan])) == {}


def test_a_childs_lock_still_locked_in_the_parent_names_the_parent_threads_referencing_it():
    # GIVEN the parent's object at the child's lock address: a live, locked threading.Lock a parent thread references
    tree = tree_analysis.analyse(lock_tree(in_parent()))
    ((pid, h),) = tree_hazards(tree, HazardKind.ORPHANED_LOCK)
    # THEN likely (evidence, not a record), naming the parent's thread and where it references the lock
    assert pid == 200 and h.variant == "parent-reference" and h.confidence == Confidence.LIKELY
    assert [t.tid for t in h.facts.parent_threads] == [101] and h.facts.processes == [200, 100]
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))
    (j,) = doc["fork_hazards"]
    assert j["confidence"] == "likely" and j["processes"] == [200, 100]
    assert j["parent_references"] == [{"pid": 100, "tid": 101, "function": "holder", "file": "/srv/app.py",
                                       "line": 27}]
    assert ('in the parent PID 100 (python3) the object at 0x%x is still a locked threading.Lock (refcount 3): '
            'Thread 2 (LWP 101) "lock-holder" references the lock in File "/srv/app.py", line 27, in holder '
            '(inside `with lock:`, or holding it in a variable)' % LOCK) in j["evidence"]
    text = render_tree_text(tree)
    assert "[orphaned-lock] PID 200 Thread 1 (LWP 200) (likely)" in text
    # the child's own report keeps its own hazard
    assert tree.process(200).report.fork_hazards[0].variant == "python-lock"


def test_a_freed_reused_or_unlocked_address_in_the_parent_names_nobody():
    cases = {
        "freed (refcount field is pymalloc's free-list link)": in_parent(alive=False, refcount=0x7f00000a0b00),
        "reused by another object": in_parent(type_name="dict"),
        "reused by another kind of lock": in_parent(type_name="_thread.RLock"),
        "no lock there at all": {LOCK: LockObject(object=LOCK, type_name=None, alive=False)},
        "released in the parent": in_parent(locked=False),
        "its state unreadable": in_parent(locked=None),
        "referenced by no parent thread": in_parent(tids=()),
        "referenced by a thread the parent's report does not have": in_parent(tids=(999,)),
        "the parent could not be asked": None,
        "the parent was asked about another address": in_parent(address=LOCK + 0x40),
    }
    for why, objects in cases.items():
        tree = tree_analysis.analyse(lock_tree(objects))
        assert [h.variant for _, h in tree.fork_hazards] == ["python-lock"], why


def test_a_parent_thread_waiting_on_the_same_lock_is_not_named_as_its_holder():
    # GIVEN two parent threads referencing the lock: one holds it, the other waits to acquire it
    waiting = py_lock_wait(102)
    waiting.gdb_num = 3
    tree = tree_analysis.analyse(lock_tree(in_parent(tids=(102, 101)),
                                           parent_threads=(named(100, 1, "main"), named(101, 2, "lock-holder"),
                                                           waiting)))
    ((_, h),) = tree_hazards(tree, HazardKind.ORPHANED_LOCK)
    assert [t.tid for t in h.facts.parent_threads] == [101]
    # and a waiter alone names nobody
    tree = tree_analysis.analyse(lock_tree(in_parent(tids=(102,)), parent_threads=(named(100, 1, "main"), waiting)))
    assert [h.variant for _, h in tree.fork_hazards] == ["python-lock"]


IDENT = 0x7f00000a1640


def rlock_owner_gone(tid, address=LOCK):
    return Hazard(HazardKind.ORPHANED_LOCK, [tid], Confidence.CERTAIN, "owner-gone",
                  {"thread": tid, "kind": WaitKind.PY_RLOCK, "address": address, "library": None, "gone": [],
                   "owner_ident": IDENT, "internal": None, "child": True, "descriptor": {"address": IDENT, "tid": 0}})


def rlock_tree(seen):
    parent = process(100, 1, named(100, 1, "main"), named(101, 2, "holder"))
    parent.lock_objects = {LOCK: from_data(LockObject, dict({"object": LOCK, "type_name": "_thread.RLock",
                                                             "refcount": 2, "alive": True, "locked": True,
                                                             "owner_thread_id": IDENT, "owner_tid": 101,
                                                             "references": []}, **seen))}
    child = process(200, 100, ThreadReport(tid=200, gdb_num=1, gil=GilState.RELEASED,
                                           blocked_on=BlockedOn(kind=WaitKind.PY_RLOCK, address=LOCK)))
    return TreeReport(root_pid=100, processes=[parent, fork_child(child, rlock_owner_gone(200))])


def test_a_childs_rlock_owned_by_a_pthread_t_that_owns_it_in_the_parent_names_that_parent_thread():
    # GIVEN a child's RLock whose recorded owner is no thread of the child (fork zeroed the descriptor's TID)
    assert tree_forks.lock_objects_wanted(rlock_tree({})) == {100: [LOCK]}
    # WHEN the parent's RLock at that address is owned by the same pthread_t, its thread LWP 101
    tree = tree_analysis.analyse(rlock_tree({}))
    ((pid, h),) = tree_hazards(tree, HazardKind.ORPHANED_LOCK)
    # THEN that thread is named, certain: both copies record the owner
    assert pid == 200 and h.variant == "parent-owner" and h.confidence == Confidence.CERTAIN
    (j,) = harness.validated_tree(json.loads(json.dumps(tree_json(tree))))["fork_hazards"]
    assert ("its owner pthread_t 0x%x is no thread of this process: in the parent PID 100 (python3) the same RLock "
            "(fork keeps addresses) is still owned by pthread_t 0x%x, which is Thread 2 (LWP 101) \"holder\""
            % (IDENT, IDENT)) in j["evidence"]
    assert j["processes"] == [200, 100]


def test_a_childs_rlock_names_nobody_when_the_parent_has_no_such_owner_there():
    for why, seen in {"another owner": {"owner_thread_id": IDENT + 0x1000},
                      "freed": {"alive": False},
                      "another type": {"type_name": "_thread.lock"},
                      "the owner is no Python thread of the parent": {"owner_tid": None},
                      "the owner is no thread in the parent's report": {"owner_tid": 999}}.items():
        tree = tree_analysis.analyse(rlock_tree(seen))
        assert [h.variant for _, h in tree.fork_hazards] == ["owner-gone"], why

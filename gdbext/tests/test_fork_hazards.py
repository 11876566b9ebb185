"""fork-hazards: a fork child that did not exec, what it inherited that can
never be released, and how pyhang knows — live and from a core, compared
with what the scenario recorded (TIDs, lock addresses, who held what)."""
import json
import os
import re
import subprocess

import pytest

import harness

PY = "/usr/bin/python3.11"


def gcore(s, pid):
    """A core of any process of the scenario (e.g. a fork child)."""
    return harness.gcore(pid, s.tmp)


def tree_json(*args):
    """The pyhang-tree/1 document of `pyhang report --json ARGS`."""
    status, out, err = harness.pyhang_cli("report", "--json", *[str(a) for a in args])
    assert status in (0, 3, 5), err
    doc = harness.validated_tree(json.loads(out))
    # the exit status is the document's own, and a lock copied locked into a child is a hang (5) unless a
    # deadlock (3) is found too
    assert doc["exit_status"] == status
    if any(h["kind"] == "orphaned-lock" for h in doc["fork_hazards"]) and not doc["deadlocks"]:
        assert status == 5, doc["fork_hazards"]
    return doc


def hazards(report, kind):
    return [h for h in report["fork_hazards"] if h["kind"] == kind]


def fork_text(**target):
    text, out = harness.run_gdb_marked("fork-hazards", **target)
    assert "Traceback" not in out
    return text


def test_c_mutex_held_by_a_parent_thread_at_fork(scenario):
    # GIVEN a parent thread holding a C mutex while main forks, and the child
    # blocked locking that mutex
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "fork_mutex.py"),
                  harness.fixture_path("libforkfixture.so")])
    child, holder = s.truth["child"], s.truth["holder"]
    # WHEN pyhang looks at the live child
    live = harness.report_json(pid=child["pid"])
    # THEN the lock is orphaned: its owner is the parent's thread, not one of the child's
    (h,) = hazards(live, "orphaned-lock")
    assert h["threads"] == [child["tid"]]
    assert "LWP %d is not a thread of this process" % holder in h["evidence"]
    assert "is a thread of the parent PID %d" % s.pid in h["evidence"]
    assert "0x%x" % s.truth["mutex"] in h["evidence"] and h["advice"]
    # and the parent had another thread at fork, seen in the child's own memory
    (t,) = hazards(live, "threads-at-fork")
    assert "1 descriptor of parent threads" in t["evidence"] and "holder (libforkfixture.so)" in t["evidence"]
    text = fork_text(pid=child["pid"])
    assert "This process is a fork child of PID %d that did not exec" % s.pid in text
    assert "the address space is the parent's copy" in text
    # (the start times, from /proc/PID/stat of both: the child started after its parent)
    started = re.search(r"started (\d+) clock ticks after its parent", text)
    assert started and int(started.group(1)) >= 0, text
    # WHEN from the child's core: the same, from memory alone
    child_core = gcore(s, child["pid"])
    core = harness.report_json(executable=PY, core=child_core)
    (h,) = hazards(core, "orphaned-lock")
    assert h["threads"] == [child["tid"]] and "LWP %d is not a thread" % holder in h["evidence"]
    assert "fork child" in h["evidence"]
    assert hazards(core, "threads-at-fork")
    # AND across the tree, live and from the two cores: the owner is named as the parent's thread
    parent_core = s.gcore()
    for where, doc in (("live", tree_json("--tree", "-p", s.pid)), ("cores", tree_json(parent_core, child_core))):
        (h,) = [h for h in doc["fork_hazards"] if h["kind"] == "orphaned-lock"]
        assert h["pid"] == child["pid"] and h["processes"] == [child["pid"], s.pid], where
        assert h["threads"] == [child["tid"]] and h["confidence"] == "certain", where
        assert ("its owner LWP %d is not alive in this process: it is Thread 2 (LWP %d)" % (holder, holder)
                in h["evidence"]), (where, h["evidence"])
        assert "of the parent PID %d" % s.pid in h["evidence"], where
    # AND the parent itself (2 threads, no multiprocessing) has no fork hazard
    parent = fork_text(pid=s.pid)
    assert "No evidence that this process is a fork child." in parent
    assert "No fork hazards found." in parent and "Checked: " in parent


def test_fork_pool_task_takes_a_lock_a_parent_thread_held(scenario):
    # GIVEN a parent thread holding a threading.Lock while a default (fork)
    # Pool's task takes it: both workers block on their copies
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "fork_pool_lock.py")])
    workers = s.truth["workers"]
    assert len(workers) == 2
    for i, w in enumerate(workers):
        report = harness.report_json(pid=w["pid"])
        # THEN each worker: an orphaned Lock (no owner recorded: likely), the
        # fork start method, and the parent's threads that were not copied
        (h,) = hazards(report, "orphaned-lock")
        assert h["threads"] == [w["tid"]] and h["confidence"] == "likely"
        assert "threading.Lock 0x%x" % s.truth["lock"] in h["evidence"]
        assert hazards(report, "fork-start-method") and hazards(report, "threads-at-fork")
        if i == 0:
            text = fork_text(pid=w["pid"])
            assert "ForkProcess named 'ForkPoolWorker-" in text
            assert "multiprocessing's fork bootstrap (popen_fork.py _launch" in text
        # and from the worker's core, with no /proc to help
        w["core"] = gcore(s, w["pid"])
        if i == 0:
            core = harness.report_json(executable=PY, core=w["core"])
            (h,) = hazards(core, "orphaned-lock")
            assert h["threads"] == [w["tid"]]
            assert hazards(core, "fork-start-method") and hazards(core, "threads-at-fork")
    # AND the parent: threads and the fork start method
    parent = harness.report_json(pid=s.pid)
    (h,) = hazards(parent, "fork-start-method")
    assert "start method is fork" in h["evidence"]
    assert not hazards(parent, "orphaned-lock")
    # AND across the tree, live and from one core per process: fork keeps addresses, the parent's object at the
    # workers' lock address is still a locked Lock, and the parent thread referencing it is named (likely)
    holder, by_pid = harness.role_tid(s, "holds-lock"), {w["pid"]: w for w in workers}
    cores = [s.gcore()] + [w["core"] for w in workers]
    for where, doc in (("live", tree_json("--tree", "-p", s.pid)), ("cores", tree_json(*cores))):
        found = [h for h in doc["fork_hazards"] if h["kind"] == "orphaned-lock"]
        assert sorted(h["pid"] for h in found) == sorted(by_pid), where
        for h in found:
            w = by_pid[h["pid"]]
            assert h["threads"] == [w["tid"]] and h["confidence"] == "likely", where
            assert h["processes"] == [w["pid"], s.pid], where
            (ref,) = h["parent_references"]
            assert (ref["pid"], ref["tid"], ref["function"]) == (s.pid, holder, "holder"), (where, ref)
            assert ref["file"].endswith("fork_pool_lock.py"), (where, ref)
            assert "threading.Lock 0x%x" % s.truth["lock"] in h["evidence"], where
            assert ('the object at 0x%x is still a locked threading.Lock' % s.truth["lock"]) in h["evidence"], where
            ev = h["evidence"].split("in the parent PID %d" % s.pid)[1]
            assert 'Thread 2 (LWP %d)' % holder in ev, (where, ev)  # a core records no thread's name
            assert 'references the lock in File "%s", line %d, in holder' % (ref["file"], ref["line"]) in ev, where
    # AND what the tree asks the parent: the lock at that address, alive and locked, referenced by the holder;
    # garbage addresses are no lock; a bad argument is one line
    path = os.path.join(s.tmp, "locks.json")
    text, out = harness.run_gdb_marked("pyhang lock-objects %s 0x10 0x%x 0x%x" % (path, s.truth["lock"], 1 << 47),
                                       pid=s.pid)
    with open(path) as f:
        junk, lock, high = json.load(f)
    assert (lock["type_name"], lock["alive"], lock["locked"]) == ("_thread.lock", True, True), lock
    assert [r["tid"] for r in lock["references"]] == [holder] and lock["references"][0]["function"] == "holder"
    assert all(o["type_name"] is None and not o["alive"] and not o["references"] for o in (junk, high))
    text, out = harness.run_gdb_marked("pyhang lock-objects %s 0xzz" % path, pid=s.pid)
    assert "Traceback" not in out, out
    assert text.strip() == "pyhang: pyhang lock-objects: argument addresses: invalid address value: '0xzz'", text
    # AND in gdb attached to the parent (its own objects read in that session), the text says the same
    text, out = harness.run_gdb_marked("pyhang report --tree", pid=s.pid)
    assert "Traceback" not in out
    across = text.split("Fork hazards across processes:")[1].split("========")[0]
    assert across.count("[orphaned-lock]") == 2 and across.count("(likely)") == 2, across
    assert across.count('(LWP %d) "lock-holder"' % holder) == 2, across
    assert across.count("references the lock in File") == 2, across


def test_fork_pool_task_takes_an_rlock_a_parent_thread_held(scenario):
    # GIVEN a parent thread inside `with CONDITION:` (its RLock records the owner's pthread_t) while a fork
    # Pool's task takes it: both workers block on their copies
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "fork_pool_lock.py"), "rlock"])
    workers, holder = s.truth["workers"], harness.role_tid(s, "holds-lock")
    # THEN a worker alone: its RLock's owner is no thread of it, a descriptor fork left behind (certain)
    w = workers[0]
    (h,) = hazards(harness.report_json(pid=w["pid"]), "orphaned-lock")
    assert h["threads"] == [w["tid"]] and h["confidence"] == "certain"
    assert "py-rlock 0x%x; its owner pthread_t 0x" % s.truth["lock"] in h["evidence"]
    assert "it is the descriptor of a parent thread that fork did not copy" in h["evidence"]
    # AND across the tree, live and from one core per process: the parent's RLock at that address is owned by
    # the same pthread_t, the holder thread, named for certain
    cores = [s.gcore()] + [gcore(s, x["pid"]) for x in workers]
    by_pid = {x["pid"]: x for x in workers}
    for where, doc in (("live", tree_json("--tree", "-p", s.pid)), ("cores", tree_json(*cores))):
        found = [h for h in doc["fork_hazards"] if h["kind"] == "orphaned-lock"]
        assert sorted(h["pid"] for h in found) == sorted(by_pid), where
        for h in found:
            assert h["threads"] == [by_pid[h["pid"]]["tid"]] and h["confidence"] == "certain", where
            assert h["processes"] == [h["pid"], s.pid], where
            assert "waits on threading.RLock 0x%x" % s.truth["lock"] in h["evidence"], where
            assert "in the parent PID %d" % s.pid in h["evidence"], where
            assert "which is Thread 2 (LWP %d)" % holder in h["evidence"], (where, h["evidence"])


# The layouts at both ends of what pyhang reads (3.6: PyFrameObject chains, 3.13: _PyInterpreterFrame and
# PyThreadState's new fields, today's 3.14 and 3.15), each with one of the two locks (Debian's 3.11 runs both
# in the two tests above): a Lock on 3.6 and 3.14, an RLock on 3.13 and 3.15.
EDGE_VERSIONS = {"pyenv-3.6.": "lock", "pyenv-3.13.": "rlock", "debian-sid-3.14": "lock", "debian-sid-3.15": "rlock"}


def _edge_params():
    out = []
    for p in harness.interpreter_params():
        mode = next((m for prefix, m in EDGE_VERSIONS.items() if p.id.startswith(prefix)), None)
        if mode:
            out.append(pytest.param(p.values[0], mode, id="%s-%s" % (mode, p.id)))
    return out


@pytest.mark.parametrize("python,mode", _edge_params())
def test_a_lock_copied_into_fork_workers_names_the_parent_thread_on_stripped_interpreters(scenario, python, mode):
    # GIVEN a parent thread holding a Lock (or a Condition's RLock) while a fork Pool's task takes it, on a
    # stripped interpreter
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "fork_pool_lock.py"), mode], env=env)
    workers, holder = s.truth["workers"], harness.role_tid(s, "holds-lock")
    by_pid = {w["pid"]: w for w in workers}
    cores = [s.gcore()] + [gcore(s, w["pid"]) for w in workers]
    # THEN across the tree, live and from one core per process, each worker's lock names the holder thread:
    # by its reference to the Lock (likely), by the RLock's recorded owner (certain)
    for where, doc in (("live", tree_json("--tree", "-p", s.pid)),
                       ("cores", tree_json(*cores, *harness.core_options(exe)))):
        found = [h for h in doc["fork_hazards"] if h["kind"] == "orphaned-lock"]
        assert sorted(h["pid"] for h in found) == sorted(by_pid), (where, doc["fork_hazards"])
        for h in found:
            assert h["threads"] == [by_pid[h["pid"]]["tid"]] and h["processes"] == [h["pid"], s.pid], where
            assert "0x%x" % s.truth["lock"] in h["evidence"], where
            if mode == "lock":
                assert h["confidence"] == "likely", where
                assert [(r["pid"], r["tid"], r["function"]) for r in h["parent_references"]] == [
                    (s.pid, holder, "holder")], where
            else:
                assert h["confidence"] == "certain", where
                assert "(LWP %d)" % holder in h["evidence"].split("in the parent PID %d" % s.pid)[1], where


def test_openmp_pool_started_before_fork(scenario):
    # GIVEN a C program that ran an OpenMP region, forked, and runs one again in the child
    s = scenario([harness.fixture_path("prog_omp")])
    rec = s.truth["records"][0]
    child = rec["child"]
    live = harness.report_json(pid=child)
    found = hazards(live, "openmp-after-fork")
    if rec["child_finished"]:  # libgomp coped: then pyhang must not claim the child is blocked in it
        assert all(h["threads"] == [] for h in found)
        pytest.fail("the hang under test did not happen: this libgomp ran a parallel region after fork")
    # THEN the child is blocked inside libgomp, whose pool was started in the parent
    (h,) = found
    assert h["threads"] == [child] and h["confidence"] == "certain"
    assert "thread pool was started before fork: %d pool threads" % (rec["omp_threads_in_parent"] - 1) in h["evidence"]
    assert "set_num_threads(1)" in h["advice"]
    core = harness.report_json(executable=harness.fixture_path("prog_omp"), core=gcore(s, child))
    (h,) = hazards(core, "openmp-after-fork")
    assert h["threads"] == [child] and "blocked inside libgomp" in h["evidence"]
    # AND that is a hang, not a risk, alone and across the tree, though no process runs Python (exit status 5)
    for doc in (live, core, tree_json("--tree", "-p", s.pid)):
        assert doc["exit_status"] == 5 and doc["headline"].startswith("Hung without a deadlock: "), doc["headline"]


def test_torch_matmul_in_parent_and_in_a_fork_child(scenario):
    try:
        import importlib.util
        have = importlib.util.find_spec("torch") is not None
    except ImportError:
        have = False
    if not have:
        pytest.skip("torch is not installed for %s (apt-get install python3-torch)" % PY)
    # GIVEN torch with 2 intra-op threads used in the parent, then in a fork child
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "fork_torch.py"), "2"], ready_timeout=120)
    child = s.truth["child"]
    # WHEN pyhang reports on the tree of the parent
    live = tree_json("--tree", "-p", s.pid)
    report = next(p for p in live["processes"] if p.get("target", {}).get("pid") == child)
    found = hazards(report, "openmp-after-fork")
    if s.truth["child_finished"]:
        assert all(h["threads"] == [] for h in found)
        pytest.fail("the hang under test did not happen: torch %s finished its ops in the fork child" %
                    s.truth["torch"])
    # THEN (measured: Debian's torch 1.13.1 hangs) pyhang names libgomp and the advice
    (h,) = found
    assert h["threads"] == [child] and "libgomp" in h["evidence"]
    assert "torch.set_num_threads(1)" in h["advice"]
    # AND across the tree with the parent, live and from the two cores: the threads the child
    # waits for are the parent's pool threads, alive only there
    cores = (s.gcore(), gcore(s, child))
    for where, doc in (("live", live), ("cores", tree_json(*cores))):
        (h,) = [h for h in doc["fork_hazards"] if h["kind"] == "openmp-after-fork"]
        assert h["pid"] == child and h["processes"] == [child, s.pid] and h["threads"] == [child], where
        assert "they exist only in the parent PID %d" % s.pid in h["evidence"], where
        assert "their owner is not alive in this child" in h["evidence"], where


def test_cuda_initialised_before_fork_fixture_driver(scenario):
    # GIVEN a FIXTURE named libcuda.so.1 (no GPU here) initialised before os.fork
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "fork_cuda.py"),
                  harness.fixture_path("libcudafixture.so")])
    child = s.truth["child"]["pid"]
    for where, report in (("live", harness.report_json(pid=child)),
                          ("core", harness.report_json(executable=PY, core=gcore(s, child)))):
        # THEN the driver is mapped in the child and its thread ran in the parent
        (h,) = hazards(report, "cuda-after-fork")
        assert s.truth["driver"] in h["evidence"], where
        assert "CUDA was initialised before fork" in h["evidence"] and h["confidence"] == "certain", where


def test_copy_on_write_of_a_large_list_read_by_two_fork_workers(scenario):
    # GIVEN a large list of small str built by the parent and read by two fork workers
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "fork_cow.py")], ready_timeout=120)
    for w in s.truth["workers"]:
        report = harness.report_json(pid=w["pid"])
        # THEN (live) private-dirty against shared memory, and the list by name, length and address
        (h,) = hazards(report, "cow-refcount")
        assert "Private_Dirty" in h["evidence"]
        assert "%s: list of %d items" % (s.truth["where"], s.truth["length"]) in h["evidence"]
        assert "0x%x" % s.truth["data"] in h["evidence"]
        assert "numpy" in h["advice"]

"""gRPC against a real server of its own (Debian's python3-grpcio 1.51, packaged for python3.11 only): a
gRPC server process that forked a multiprocessing worker whose RPC never completes
(testdata/scenarios/grpc_fork.py).  The parent's gRPC threads, each parked in Abseil's per-thread
semaphore below gRPC's frames, are idle workers, never guessed holders of each other's futex: no
invented cycle (before: "more deadlock cycles than pyhang lists", 1000 of them), and the parent waits on
its child (exit 4).  The worker's call waits on a completion queue that only the parent's threads drove:
a certain grpc-after-fork hazard, a hang (exit 5), live, from its core and as a tree."""
import json
import subprocess
import time

import pytest

import harness

PY = "/usr/bin/python3.11"
HAS_GRPC = subprocess.run([PY, "-c", "import grpc"], stderr=subprocess.DEVNULL).returncode == 0


@pytest.fixture(scope="module")
def grpc_fork():
    if not HAS_GRPC:   # a missing package is a failed set-up, never a skip: testdata/setup.sh --tests installs it
        pytest.fail("python3-grpcio is not installed for %s (testdata/setup.sh --tests)" % PY)
    s = harness.python_scenario(PY, "grpc_fork.py").start()
    try:
        worker, caller = s.truth["worker"]["pid"], s.truth["worker"]["tid"]
        # the hang must have happened: the parent in Process.join (wait4), the worker's call parked.  Only the
        # calling thread is waited for: gRPC's poll loop wakes every 200 ms, so on a loaded host the moment
        # when every thread of the worker sleeps at once may not come
        deadline = time.monotonic() + 60
        while harness.thread_syscall(s.pid, s.pid) != 61 or harness.thread_state(worker, caller) != "S":
            if time.monotonic() > deadline:
                pytest.fail("the hang did not happen: parent in %s, the worker's call %s" % (
                    harness.thread_syscall(s.pid, s.pid), harness.thread_state(worker, caller)))
            time.sleep(0.05)
        yield s
    finally:
        s.stop()


def grpc_threads(doc):
    return [t for t in doc["threads"] if any("cygrpc" in (f["library"] or "") for f in t["native_frames"])
            and t["gil"] == "no-python"]


def test_the_grpc_server_parents_idle_grpc_threads_make_no_cycle_and_it_waits_on_its_worker(grpc_fork):
    s = grpc_fork
    status, doc = harness.report_doc("-p", s.pid)
    # THEN no deadlock, and no thread is guessed to hold what another gRPC thread waits for
    assert doc["deadlocks"] == [] and [e for e in doc["edges"] if e["source"] == "heuristic"] == []
    # AND gRPC's native threads (executors, timers, event engine) are idle workers of gRPC's pool
    native = grpc_threads(doc)
    assert len(native) >= 4
    (idle,) = [v for v in doc["verdicts"] if v["kind"] == "pool-idle"]
    assert {t["tid"] for t in native} <= set(idle["threads"])
    assert all(t["account"]["state"] == "idle" for t in native)
    # AND the main thread waits for its child: exit 4, the headline names the worker
    (w,) = [v for v in doc["verdicts"] if v["kind"] == "waits-on-process"]
    assert w["facts"]["waits"][0]["pids"] == [s.truth["worker"]["pid"]]
    assert status == 4 and doc["headline"].startswith("Waits on PID %d" % s.truth["worker"]["pid"])


def _worker_hazard(doc, s):
    (h,) = [h for h in doc["fork_hazards"] if h["kind"] == "grpc-after-fork"]
    assert h["threads"] == [s.truth["worker"]["tid"]] and h["confidence"] == "certain"
    assert "waits in a gRPC call" in h["evidence"] and "_channel.py" in h["evidence"]
    assert "GRPC_ENABLE_FORK_SUPPORT" in h["advice"]
    return h


def test_the_workers_call_waits_for_grpc_threads_fork_did_not_copy_live(grpc_fork):
    s = grpc_fork
    status, doc = harness.report_doc("-p", s.truth["worker"]["pid"])
    _worker_hazard(doc, s)
    assert doc["deadlocks"] == [] and [e for e in doc["edges"] if e["source"] == "heuristic"] == []
    (main,) = [t for t in doc["threads"] if t["tid"] == s.truth["worker"]["tid"]]
    assert main["account"]["state"] == "hung" and main["account"]["finding"] == "grpc-after-fork"
    # (whether the call sleeps in epoll_wait or in gRPC's futex at that moment, the hazard explains it)
    assert [v for v in doc["verdicts"] if v["kind"] in ("owners-unknown", "unaccounted")] == []
    assert status == 5 and doc["headline"] == "Hung without a deadlock: a gRPC call waits for threads fork did " \
                                              "not copy."


def test_the_workers_core_gives_the_same_hang(grpc_fork):
    s = grpc_fork
    core = harness.gcore(s.truth["worker"]["pid"], s.tmp)
    status, doc = harness.report_doc(core, PY)
    _worker_hazard(doc, s)
    assert doc["deadlocks"] == [] and status == 5


def test_the_tree_from_the_parent_says_the_workers_hang_and_no_deadlock(grpc_fork):
    s = grpc_fork
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    doc = harness.validated_tree(json.loads(out))
    assert doc["deadlocks"] == [] and status == 5, err
    assert doc["headline"] == "Hung without a deadlock: in PID %d a gRPC call waits for threads fork did not " \
                              "copy." % s.truth["worker"]["pid"]

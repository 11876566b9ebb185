"""The records a collector makes of the native module's answers keep every
key the native answer gives: a field the native side adds cannot be dropped
silently on its way to the analysis.  An answer the native module makes as
its record itself (python/records.hpp checks its table against the record)
reaches the analysis as it is, and its data (a snapshot's) gives it back.
Asked of a live asyncio scenario with threads
(testdata/scenarios/asyncio_tasks.py) and of a fork child that lost a
thread at fork, read without stopping them."""
import json
import os
import signal
import subprocess

import _pyhang_native as native
import pytest

import harness
from pyhang import fd_holders, native_facts
from pyhang.analysis import locks
from pyhang.model.asyncio_facts import AsyncioState
from pyhang.model.files import FdObject
from pyhang.model.fork_facts import ForkContainers, ForkFacts, ProcessFacts, PythonForkFacts
from pyhang.model.python_facts import PyFrameFacts, PyThreadFacts, PythonState
from pyhang.model.facts import frame_sequence
from pyhang.model.lock_objects import LockObject
from pyhang.model.python_values import FrameLocals, ObjectValue
from pyhang.model.record import from_data, to_data
from pyhang.model.references import ObjectPath, ThreadReferences
from pyhang.model.threading_facts import ThreadingState
from pyhang.nostop import no_stop_facts

PY = "/usr/bin/python3.11"

# A fork child of a process with a second thread, holding a large list: its fork facts have a descriptor of
# the thread fork did not copy, /proc facts and a large container.  It prints its PID and waits on stdin.
FORK_CHILD = """
import os, sys, threading, time
big = list(range(50000))
threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
pid = os.fork()
if pid == 0:
    print(os.getpid(), flush=True)
    sys.stdin.read()
    os._exit(0)
os.waitpid(pid, 0)
"""


@pytest.fixture(scope="module")
def scenario_process():
    s = harness.Scenario([PY, "-u", os.path.join(harness.SCENARIOS, "asyncio_tasks.py")]).start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def facts(scenario_process):
    return no_stop_facts(scenario_process.pid)


def lock_caller(s):
    """The thread that holds a threading.Lock (a local of its frame) and waits on a future."""
    return next(t for t in s.truth["threads"] if t["role"] == "rcts-lock-caller")


@pytest.fixture(scope="module")
def fork_child():
    p = subprocess.Popen([PY, "-c", FORK_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    child = int(p.stdout.readline())
    try:
        yield no_stop_facts(child)
    finally:
        p.stdin.close()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(child, signal.SIGKILL)
            p.kill()
            p.wait()


def plain(data):
    """`data` as JSON gives it back (a native sequence of frames as a list)."""
    return json.loads(json.dumps(data, default=frame_sequence))


def assert_kept(cls, raw):
    """The record of `raw` gives back every key and value of it."""
    assert raw, "the native answer is empty: nothing was checked"
    assert plain(to_data(from_data(cls, raw))) == plain(raw)


def assert_record(cls, answer):
    """`answer` is a record of `cls` that its own data (a snapshot's) gives back."""
    assert type(answer) is cls, answer
    assert from_data(cls, plain(to_data(answer))) == answer


def test_threading_state_is_the_native_record_and_its_data_gives_it_back(facts):
    raw = facts.python_locks_decoder().threading()
    assert len(raw.threads) >= 3
    assert_record(ThreadingState, raw)
    assert facts.threading() == raw


def test_fork_facts_cross_as_their_records_and_keep_every_field(fork_child):
    facts = fork_child
    bases = sorted(locks.thread_bases(facts.threads(0)))
    found = native.fork_facts(facts.native_target, bases, True, facts.interpreter(), containers=True)
    assert type(found) is ForkFacts and type(found.python) is PythonForkFacts
    found.process = native_facts.process_facts(facts.native_target.pid)
    assert type(found.process) is ProcessFacts
    assert found.descriptors and found.descriptors[0].start_routine and found.internal_locks
    assert found.python.containers and found.process.same_address_space
    assert from_data(ForkFacts, to_data(found)) == found
    containers = native.fork_containers(facts.interpreter())
    assert type(containers) is ForkContainers and containers.containers
    assert from_data(ForkContainers, to_data(containers)) == containers
    assert facts.fork_facts(bases).descriptors == found.descriptors


def test_asyncio_state_crosses_as_its_record_and_keeps_every_field(facts):
    state = native.asyncio_state(facts.interpreter())
    assert type(state) is AsyncioState
    state.clock = 1.5   # the collector's clock, as live
    tasks = state.tasks
    assert state.loops and state.jobs and [t for t in tasks if t.stack and t.completes]
    assert [t for t in tasks if t.awaits and t.awaits.chained]
    assert from_data(AsyncioState, to_data(state)) == state
    assert [t.object for t in facts.asyncio().tasks] == [t.object for t in tasks]


def test_lock_objects_are_the_native_records_and_their_data_gives_them_back(facts, scenario_process):
    lock = lock_caller(scenario_process)["lock"]
    (raw,) = facts.python_locks_decoder().lock_objects([lock])
    assert raw.alive and raw.references
    assert_record(LockObject, raw)
    (found,) = facts.lock_objects([lock])
    assert found == raw and found.object == lock and found.type_name == "_thread.lock"


def test_thread_references_are_the_native_record_and_its_data_gives_it_back(facts, scenario_process):
    caller = lock_caller(scenario_process)
    raw = facts.python_locks_decoder().thread_references([caller["future"]])
    assert raw.by_object
    assert_record(ThreadReferences, raw)
    assert facts.references([caller["future"]]).by_object == [[caller["future"], [caller["tid"]]]]


def test_python_state_is_the_native_answer_itself(facts):
    # the native module makes the PythonState: its records, down to each frame, are made in C++
    raw = facts.interpreter().state()
    framed = [t for t in raw.threads if len(t.frames)]
    assert type(raw) is PythonState and raw.gils and raw.gils[0].ranges and len(framed) >= 3
    assert all(type(t) is PyThreadFacts for t in raw.threads) and type(framed[0].frames[0]) is PyFrameFacts
    # and its data gives the same state back (a snapshot of it)
    again = from_data(PythonState, plain(to_data(raw)))
    assert plain(to_data(again)) == plain(to_data(raw))
    state = facts.python()
    assert [t.native_tid for t in state.threads] == [t.native_tid for t in raw.threads]
    # a thread's frames are made when asked for, and keep the native frame keys
    (thread,) = [t for t in state.threads if t.native_tid == framed[0].native_tid]
    assert thread.frames.keys() == framed[0].frames.keys() and thread.frames[0].code == framed[0].frames[0].code


def test_attributes_are_the_native_records_and_their_data_gives_them_back(facts):
    main = next(t for t in facts.threading().threads if t.name == "MainThread")
    raw = facts.python_locks_decoder().attributes(main.object, ["_name", "_ident", "_started", "no_such"])
    assert raw["_name"].text == "MainThread" and raw["_ident"].integer and raw["no_such"] is None
    for value in raw.values():
        if value is not None:
            assert_record(ObjectValue, value)
    (found,) = facts.attributes([[main.object, ["_name", "no_such"]]])
    assert found == {"_name": raw["_name"], "no_such": None}


def test_frame_locals_are_the_native_records_and_their_data_gives_them_back(facts, scenario_process):
    caller = lock_caller(scenario_process)
    frames = facts.python().threads
    (thread,) = [t for t in frames if t.native_tid == caller["tid"]]
    asked = [[f.frame, f.code] for f in thread.frames]
    raws = [facts.python_values().frame_locals(frame, code) for frame, code in asked]
    assert any(raw.locals for raw in raws) and any(raw.globals for raw in raws)
    for raw in raws:
        assert_record(FrameLocals, raw)
    assert facts.frame_locals(asked) == raws


def test_object_names_are_the_native_records_and_their_data_gives_them_back(facts, scenario_process):
    lock = lock_caller(scenario_process)["lock"]
    raw = facts.python_locks_decoder().object_names([lock])
    assert raw[lock].module == "__main__" and raw[lock].variable == "SWITCH"
    assert_record(ObjectPath, raw[lock])
    assert facts.object_names([lock]) == [[lock, raw[lock]]]



def test_fd_objects_keep_every_key_of_the_proc_answer(facts, scenario_process):
    fds = sorted(int(fd) for fd in os.listdir("/proc/%d/fd" % scenario_process.pid))
    raw = fd_holders.files(scenario_process.pid, fds)
    # an event loop's epoll instance and its self-pipe (a connected unix socket pair, both ends here)
    assert [o for o in raw.values() if o.get("epoll") is not None]
    assert [o for o in raw.values() if o.get("socket") and o.get("holders")]
    for obj in raw.values():   # /proc gives only the keys an fd has
        assert harness.kept(plain(obj), plain(to_data(from_data(FdObject, obj)))), obj
    assert dict(facts.files(fds)) == {fd: from_data(FdObject, plain(obj)) for fd, obj in raw.items()}

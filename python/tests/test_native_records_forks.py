"""What a live target nobody stopped gives crosses as the records of
pyhang.model.waits, made in C++ (python/records.hpp): a parked thread's
kernel record as a ParkedRegisters, glibc's lists of threads as a
ThreadDescriptors, and why those lists could not be walked as a
ThreadListIssue, and asyncio's tasks and loops as an AsyncioState of
TaskFacts, AwaitedFuture, CodeLine and LoopFacts; each equal to what its own
JSON gives back.  So do a target's fork facts (ForkFacts, ProcessFacts,
ForkContainers and their parts)."""
import os
import subprocess
import threading

import pytest

import _pyhang_native as native

from pyhang.model import record as records
from pyhang.model.asyncio_facts import AsyncioState, AwaitedFuture, LoopFacts, TaskFacts
from pyhang.model.fork_facts import (
    BigContainer, ForkContainers, ForkFacts, InternalLock, Landmarks, ProcessFacts, PythonForkFacts, ThreadDescriptor)
from pyhang.model.waits import CodeLine, ParkedRegisters, ThreadDescriptors, ThreadListIssue

PY = "/usr/bin/python3.11"
SYS_FUTEX = 202

# One thread parked for good on a lock the main thread holds; the main thread waits on stdin.
SCRIPT = r"""
import sys, threading
held = threading.Lock()
held.acquire()
def park():
    print(threading.get_native_id(), threading.get_ident(), flush=True)
    held.acquire()
threading.Thread(target=park, daemon=True).start()
sys.stdin.read()
"""


# A task asleep for good, awaited by the main task, on a loop run by the main thread.
ASYNCIO = r"""
import asyncio, threading
async def main():
    sleeper = asyncio.ensure_future(asyncio.sleep(3600))
    await asyncio.sleep(0)
    print(threading.get_native_id(), flush=True)
    await sleeper
asyncio.run(main())
"""

needs_python = pytest.mark.skipif(not os.path.exists(PY), reason="no %s" % PY)


def parked(target, tid):
    """The thread's record once it waits in futex (bounded wait), else None."""
    wait = threading.Event()
    for _ in range(1000):
        found = native.parked_registers(target, tid)
        if found is not None and found.state == "in-call" and found.registers.get("orig_rax") == SYS_FUTEX:
            return found
        wait.wait(0.01)
    return None


@pytest.fixture
def parked_thread():
    with subprocess.Popen([PY, "-c", SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        try:
            tid, ident = (int(w) for w in proc.stdout.readline().split())
            target = native.Target.live(proc.pid)
            assert parked(target, tid) is not None, "the thread never parked on the lock"
            yield proc, tid, ident, target
        finally:
            proc.kill()


@needs_python
def test_a_parked_thread_crosses_as_its_parked_registers_record(parked_thread):
    # GIVEN a live python3.11 thread parked in a futex wait on a lock
    proc, tid, ident, target = parked_thread
    # WHEN its kernel record is read, with its struct pthread as fs_base
    parked = native.parked_registers(target, tid, fs_base=ident)
    # THEN the answer is the model's record: its state the ParkState name, its registers a {name: int} container
    assert type(parked) is ParkedRegisters
    assert parked.state == "in-call"
    assert set(parked.registers) == {"orig_rax", "rdi", "rsi", "rdx", "r10", "r8", "r9", "rsp", "rip", "fs_base"}
    assert parked.registers["orig_rax"] == SYS_FUTEX and parked.registers["fs_base"] == ident
    # AND its JSON gives the same record back
    assert records.from_data(ParkedRegisters, records.to_data(parked)) == parked


@needs_python
def test_glibc_thread_lists_cross_as_thread_descriptors_with_no_problem(parked_thread):
    # GIVEN the same live process (the main thread and the parked one)
    proc, tid, ident, target = parked_thread
    # WHEN glibc's lists of threads are walked
    found = native.thread_descriptors(target)
    # THEN the answer is a ThreadDescriptors record naming the parked thread's struct pthread, the walk complete
    assert type(found) is ThreadDescriptors
    assert found.problem is None
    assert found.threads[tid] == ident
    assert sorted(found.threads) == sorted(int(t) for t in os.listdir("/proc/%d/task" % proc.pid))
    assert records.from_data(ThreadDescriptors, records.to_data(found)) == found


def test_lists_that_cannot_be_found_cross_as_a_thread_list_issue_record():
    # GIVEN a callback target with nothing mapped (no libc to find the lists in)
    image = native.Target.from_callback(lambda address, size: None, [], "nothing")
    # WHEN glibc's lists of threads are walked
    found = native.thread_descriptors(image)
    # THEN no thread is found, and the problem is a ThreadListIssue record whose kind is the native name
    assert type(found) is ThreadDescriptors and found.threads == {}
    assert type(found.problem) is ThreadListIssue
    assert found.problem.kind == "libc-not-mapped"
    # AND the whole answer, its problem nested, comes back from its JSON
    assert records.from_data(ThreadDescriptors, records.to_data(found)) == found


def test_a_thread_of_a_callback_target_has_no_parked_registers_record():
    # GIVEN a callback target (no /proc record to read)
    image = native.Target.from_callback(lambda address, size: None, [], "nothing")
    # THEN there is no record at all, not an empty one
    assert native.parked_registers(image, os.getpid()) is None


@needs_python
def test_asyncio_state_crosses_as_its_record_with_tasks_futures_and_loops():
    # GIVEN a live python3.11 whose main task awaits a task asleep in asyncio.sleep
    with subprocess.Popen([PY, "-c", ASYNCIO], stdout=subprocess.PIPE, text=True) as proc:
        try:
            tid = int(proc.stdout.readline())
            interpreter = native.Interpreter(native.Target.live(proc.pid))
            # WHEN asyncio's state is read (again, a few times at most, until the main task awaits the other)
            wait = threading.Event()
            for _ in range(100):
                state = native.asyncio_state(interpreter)
                if len(state.tasks) == 2 and all(t.awaits is not None for t in state.tasks):
                    break
                wait.wait(0.02)
                interpreter = native.Interpreter(native.Target.live(proc.pid))
        finally:
            proc.kill()
    # THEN it is the model's record, its parts the records the analysis reads
    assert type(state) is AsyncioState and state.imported and state.problem is None
    main, sleeper = sorted(state.tasks, key=lambda t: t.stack[0].function != "main")
    assert all(type(t) is TaskFacts for t in state.tasks)
    assert type(main.awaits) is AwaitedFuture and main.awaits.object == sleeper.object
    assert main.awaits.state == "pending" and main.awaits.when is None
    assert type(sleeper.stack[0]) is CodeLine and sleeper.stack[0].function == "sleep"
    assert type(sleeper.awaits.when) is float   # the sleep's deadline, on the loop's clock
    (loop,) = state.loops
    assert type(loop) is LoopFacts and loop.tid == tid and loop.loop == main.loop == sleeper.loop
    # AND its JSON gives the same record back
    assert records.from_data(AsyncioState, records.to_data(state)) == state


@needs_python
def test_fork_facts_of_a_live_process_cross_as_their_records(parked_thread):
    # GIVEN the live python3.11 with its parked thread, whose struct pthread is left out of its own threads
    proc, tid, ident, target = parked_thread
    interpreter = native.Interpreter(target)
    # WHEN its fork facts are read
    found = native.fork_facts(target, [], True, interpreter, containers=True)
    # THEN they are a ForkFacts record: the parked thread's descriptor (a ThreadDescriptor with its TID,
    # its start routine symbolized), glibc's internal locks, and the Python side
    assert type(found) is ForkFacts and found.process is None
    (mine,) = [d for d in found.descriptors if d.address == ident]
    assert type(mine) is ThreadDescriptor and mine.tid == tid and len(mine.stack) == 2
    assert mine.start_routine is not None and mine.start_routine.address
    assert found.internal_locks and all(type(lock) is InternalLock for lock in found.internal_locks)
    assert type(found.python) is PythonForkFacts and found.python.torch is False
    assert all(type(c) is BigContainer for c in found.python.containers)
    assert records.from_data(ForkFacts, records.to_data(found)) == found
    # AND /proc's facts of it are a ProcessFacts record, not the parent's copy
    process = native.process_facts(proc.pid, os.getpid())
    assert type(process) is ProcessFacts and process.pid == proc.pid and process.ppid == os.getpid()
    assert type(process.mapped) is Landmarks and process.issue is None and not process.same_address_space
    # AND its large containers are a ForkContainers record
    containers = native.fork_containers(interpreter)
    assert type(containers) is ForkContainers
    assert records.from_data(ForkContainers, records.to_data(containers)) == containers

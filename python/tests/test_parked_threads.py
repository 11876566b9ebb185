"""A python3.11 process with two threads parked in threading.Lock().acquire(),
read live without gdb and without stopping it: each thread's registers come
from its syscall record (a futex wait on its lock's semaphore), its struct
pthread from glibc's thread lists is its threading.get_ident(), and the
unwind from rsp and rip alone reaches the interpreter's lock acquire."""
import json
import os
import subprocess
import sys
import time

import pytest

import _pyhang_native as native

PY = "/usr/bin/python3.11"
SYS_FUTEX = 202

SCRIPT = r"""
import json, sys, threading
held = threading.Lock()
held.acquire()
ids = []
ready = threading.Barrier(3)
def park():
    ids.append({"tid": threading.get_native_id(), "ident": threading.get_ident()})
    ready.wait()
    held.acquire()          # parks here for good
threads = [threading.Thread(target=park, daemon=True) for _ in range(2)]
for t in threads:
    t.start()
ready.wait()
print(json.dumps({"main": threading.get_native_id(), "main_ident": threading.get_ident(), "parked": ids}),
      flush=True)
sys.stdin.read()            # until the test closes stdin
"""


@pytest.fixture
def parked_python():
    if not os.path.exists(PY):
        pytest.skip("no %s" % PY)
    proc = subprocess.Popen([PY, "-c", SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        facts = json.loads(proc.stdout.readline())
        target = native.Target.live(proc.pid)
        # Parked: each record says it waits in futex, both on the same word (the lock's semaphore; a
        # thread still taking the GIL on its way there sleeps in futex too, on another word) (bounded wait).
        deadline = time.monotonic() + 10
        while True:
            regs = [native.parked_registers(target, t["tid"]) for t in facts["parked"]]
            if all(r.state == "in-call" and r.registers["orig_rax"] == SYS_FUTEX for r in regs) and \
                    len({r.registers["rdi"] for r in regs}) == 1:
                break
            assert time.monotonic() < deadline, "threads never parked on the lock: %r" % regs
            time.sleep(0.01)
        yield proc, facts, target
    finally:
        proc.kill()
        proc.wait()


def test_each_parked_thread_has_its_futex_call_rsp_and_rip_and_no_callee_saved_register(parked_python):
    proc, facts, target = parked_python
    libc = [o for o in target.objects() if os.path.basename(o.path).startswith("libc.so")]
    assert libc
    for t in facts["parked"]:
        regs = native.parked_registers(target, t["tid"])
        assert regs.state == "in-call"
        r = regs.registers
        assert set(r) == {"orig_rax", "rdi", "rsi", "rdx", "r10", "r8", "r9", "rsp", "rip"}
        assert r["orig_rax"] == SYS_FUTEX
        assert libc[0].start <= r["rip"] < libc[0].end
        # The futex word is the lock's semaphore, which both threads share.
    words = {native.parked_registers(target, t["tid"]).registers["rdi"] for t in facts["parked"]}
    assert len(words) == 1


def test_thread_descriptors_are_the_threads_idents(parked_python):
    proc, facts, target = parked_python
    found = native.thread_descriptors(target)
    assert found.problem is None
    expected = {t["tid"]: t["ident"] for t in facts["parked"]}
    expected[facts["main"]] = facts["main_ident"]
    assert found.threads == expected
    assert sorted(found.threads) == sorted(int(t) for t in os.listdir("/proc/%d/task" % proc.pid))


def test_unwinding_from_rsp_and_rip_reaches_the_lock_acquire(parked_python):
    proc, facts, target = parked_python
    descriptors = native.thread_descriptors(target).threads
    unwinder = native.Unwinder(target)
    for t in facts["parked"]:
        regs = native.parked_registers(target, t["tid"], fs_base=descriptors[t["tid"]])
        assert regs.registers["fs_base"] == t["ident"]
        pcs, stop = unwinder.unwind(regs.registers, 64)
        names = [name for name, path, offset, debug in target.symbolize(pcs)]
        paths = [path for name, path, offset, debug in target.symbolize(pcs)]
        assert pcs[0] == regs.registers["rip"]
        # From libc's futex wait into the interpreter's lock code, through
        # the interpreter (python3.11 is built without frame pointers) to
        # glibc's start_thread and clone3, the outermost frame.
        assert "PyThread_acquire_lock_timed" in names, (names, stop)
        assert "_PyEval_EvalFrameDefault" in names, (names, stop)
        assert os.path.basename(paths[0]).startswith("libc.so")
        assert os.path.basename(paths[-1]).startswith("libc.so")
        assert stop == "end", (names, stop)


def test_reading_the_lock_word_of_a_parked_thread_is_stable(parked_python):
    proc, facts, target = parked_python
    word = native.parked_registers(target, facts["parked"][0]["tid"]).registers["rdi"]
    state, data, reads = native.read_stable(target, word, 4)
    assert state == "stable" and reads == 2 and len(data) == 4


def test_a_core_or_callback_target_has_no_parked_registers():
    image = native.Target.from_callback(lambda a, n: None, [], "nothing")
    assert native.parked_registers(image, os.getpid()) is None

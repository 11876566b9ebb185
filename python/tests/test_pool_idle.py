"""Idle workers of native thread pools (libgomp, torch's pthreadpool, ...)
are their own verdict, not "blocked, owners unknown"; anything that might
be a real wait stays there."""
from pyhang.analysis.deadlocks import idle_pool_library, verdicts
from pyhang.model.kinds import GilState, VerdictKind, WaitKind
from pyhang.model.report import BlockedOn, NativeFrame, Report, TargetInfo, ThreadReport
from pyhang.model.record import to_data

LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
GOMP = "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0"
DEPTH = 8


def thread(tid, libraries, gil=GilState.NO_PYTHON, kind=WaitKind.FUTEX, owners=()):
    return ThreadReport(tid=tid, gdb_num=tid, gil=gil, blocked_on=BlockedOn(kind=kind, address=0x1000, owners=list(owners)),
                        native_frames=[NativeFrame(pc=i + 1, library=lib) for i, lib in enumerate(libraries)])


IDLE = [GOMP, GOMP, LIBC, LIBC]   # gomp_thread_start's wait, then start_thread and clone in glibc


def test_a_worker_whose_whole_stack_is_glibc_and_one_pool_library_is_idle():
    assert idle_pool_library(thread(2, IDLE), DEPTH) == GOMP
    assert idle_pool_library(thread(2, [LIBC, "/usr/lib/libpthreadpool.so.0", LIBC, LIBC]), DEPTH)


def test_anything_that_may_be_a_real_wait_is_not_idle():
    running_a_task = [GOMP, "/usr/lib/libtorch_cpu.so", GOMP, LIBC, LIBC]
    assert idle_pool_library(thread(2, running_a_task), DEPTH) is None
    assert idle_pool_library(thread(2, ["/opt/libfixture.so", LIBC, LIBC]), DEPTH) is None   # not a pool library
    assert idle_pool_library(thread(2, IDLE + [LIBC] * 4), DEPTH) is None                  # stack cut at the depth
    assert idle_pool_library(thread(2, [GOMP, GOMP, GOMP]), DEPTH) is None                  # does not reach glibc's start
    assert idle_pool_library(thread(2, IDLE, gil=GilState.RELEASED), DEPTH) is None          # runs Python
    assert idle_pool_library(thread(2, IDLE, kind=WaitKind.MUTEX, owners=[7]), DEPTH) is None  # a known lock
    assert idle_pool_library(thread(2, [None, LIBC, LIBC]), DEPTH) is None


def test_idle_workers_are_one_verdict_and_other_unknown_waits_stay_owners_unknown():
    report = Report(target=TargetInfo(kind="live"), threads=[thread(2, IDLE), thread(3, ["/opt/libfixture.so", LIBC, LIBC])])
    got = {v.kind: v for v in verdicts(report, native_depth=DEPTH)}
    assert got[VerdictKind.POOL_IDLE].threads == [2]
    assert to_data(got[VerdictKind.POOL_IDLE].facts) == {"workers": [{"tid": 2, "library": GOMP}]}
    assert got[VerdictKind.OWNERS_UNKNOWN].threads == [3]


def test_a_stack_unwound_again_deeper_and_ended_short_of_that_depth_is_whole_without_start_thread_named():
    # gRPC's worker on Debian unstable: Abseil's own library, gRPC's frames, and a stripped glibc whose
    # start_thread has no name: 10 frames, more than the first depth (8), fewer than the deeper one (16)
    absl = "/usr/lib/x86_64-linux-gnu/libabsl_synchronization.so.20260526.0.0"
    cygrpc = "/usr/lib/python3/dist-packages/grpc/_cython/cygrpc.cpython-314-x86_64-linux-gnu.so"
    stack = [LIBC] + [absl] * 4 + [cygrpc] * 3 + [LIBC, LIBC]
    assert idle_pool_library(thread(2, stack), DEPTH) == cygrpc
    # the same at exactly the deeper depth may go on below: never taken for whole
    assert idle_pool_library(thread(2, [LIBC] + [absl] * 4 + [cygrpc] * 9 + [LIBC, LIBC]), DEPTH) is None

"""The wait-for graph (pyhang.analysis.waitgraph): every deadlock cycle and
its bounds, and the driver-lock heuristic's likely holders, whose facts the
renderer words (pyhang.render.locks.likely_holder_evidence)."""
from pyhang.analysis import waitgraph
from pyhang.analysis.waitgraph import find_cycles, likely_holders
from pyhang.libraries import is_driver_helper_thread, is_driver_library
from pyhang.model.kinds import GilState, OwnerSource
from pyhang.model.edge_facts import DriverLockFacts, LibraryCallback
from pyhang.model.record import from_data
from pyhang.model.report import BlockedOn, Edge, NativeFrame, ThreadReport
from pyhang.render.text import edge_evidence

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
CUDA = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
FFI = "/usr/lib/x86_64-linux-gnu/libffi.so.8"
PYTHON = "/usr/bin/python3.11"
VENDOR = "/opt/vendor/libvendor.so"


def edge(w, o, kind="mutex", source=OwnerSource.LOCK_WORD):
    return Edge(waiter=w, owner=o, kind=kind, address=None, source=source)


def thread(tid, frames, kind=None, address=None, owners=(), gil=GilState.RELEASED, name="python3"):
    """A thread whose native frames, innermost first, are (function, library) pairs."""
    blocked = BlockedOn(kind=kind, address=address, owners=list(owners)) if kind else None
    return ThreadReport(tid=tid, gdb_num=tid, name=name, gil=gil, blocked_on=blocked,
                        native_frames=[NativeFrame(pc=0x1000 + i, function=f, library=lib)
                                       for i, (f, lib) in enumerate(frames)])


# ---- cycles ---------------------------------------------------------------------

def test_an_abba_pair_is_one_certain_cycle_reported_from_its_smallest_tid():
    (c,), truncated = find_cycles([edge(20, 10), edge(10, 20)])
    assert c.threads == [10, 20] and (c.edges[0].waiter, c.edges[0].owner) == (10, 20)
    assert (c.edges[1].waiter, c.edges[1].owner) == (20, 10)
    assert c.confidence == "certain" and not truncated


def test_every_cycle_is_found_not_only_the_first_one_a_search_meets():
    # two cycles sharing thread 1, a separate three-thread cycle, and a thread that only waits
    cycles, truncated = find_cycles([edge(1, 2), edge(2, 1), edge(1, 3), edge(3, 1), edge(7, 8), edge(8, 9),
                                     edge(9, 7), edge(5, 1)])
    assert [c.threads for c in cycles] == [[1, 2], [1, 3], [7, 8, 9]]
    assert not truncated


def test_waiting_without_a_cycle_is_no_deadlock():
    assert find_cycles([edge(1, 2), edge(2, 3), edge(4, 3)]) == ([], False)
    assert find_cycles([]) == ([], False)


def test_a_cycle_that_needs_a_heuristic_edge_is_likely():
    (c,), _ = find_cycles([edge(1, 8, "gil", OwnerSource.GIL_STATE),
                           edge(8, 1, "rwlock-write", OwnerSource.HEURISTIC)])
    assert c.confidence == "likely"


def test_between_two_threads_a_certain_edge_is_preferred_to_a_heuristic_one():
    guess, read = edge(1, 8, "rwlock-write", OwnerSource.HEURISTIC), edge(1, 8, "rwlock-write")
    (c,), _ = find_cycles([guess, read, edge(8, 1, "gil", OwnerSource.GIL_STATE)])
    assert c.confidence == "certain" and c.edges[0] is read


def test_parallel_edges_between_two_threads_make_one_cycle():
    cycles, _ = find_cycles([edge(1, 2, "mutex"), edge(1, 2, "rwlock-read"), edge(2, 1, "mutex")])
    assert [c.threads for c in cycles] == [[1, 2]] and cycles[0].edges[0].kind == "mutex"


def test_the_cycle_search_is_bounded_by_the_number_of_cycles_on_a_dense_graph():
    dense = [edge(a, b) for a in range(1, 13) for b in range(1, 13) if a != b]
    cycles, truncated = find_cycles(dense, 50)
    assert len(cycles) == 50 and truncated


def test_the_cycle_search_is_bounded_by_its_steps(monkeypatch):
    dense = [edge(a, b) for a in range(1, 7) for b in range(1, 7) if a != b]   # 409 cycles
    everything, truncated = find_cycles(dense)
    assert not truncated
    monkeypatch.setattr(waitgraph, "MAX_STEPS", 100)
    some, truncated = find_cycles(dense)
    assert truncated and 0 < len(some) < len(everything)


def test_a_cycle_longer_than_pythons_recursion_limit_is_found():
    n = 1200   # threads: above the default recursion limit of 1000
    (c,), truncated = find_cycles([edge(t, t % n + 1) for t in range(1, n + 1)])
    assert c.threads == list(range(1, n + 1)) and len(c.edges) == n and not truncated


# ---- likely holders of driver locks ----------------------------------------------

def _driver_deadlock():
    """Thread 1 waits to write-lock a read-held rwlock of libcuda; thread 8
    called back into Python from inside libcuda and waits for the GIL;
    a CUDA helper thread and a bystander are blocked too."""
    waiter = thread(1, [(None, LIBC), ("pthread_rwlock_wrlock", LIBC), (None, CUDA),
                        ("_PyEval_EvalFrameDefault", PYTHON)], "rwlock-write", 0x1000)
    callback = thread(8, [(None, LIBC), ("PyGILState_Ensure", PYTHON), (None, FFI), (None, CUDA)],
                      "gil", owners=[1], gil=GilState.WAITING)
    helper = thread(9, [(None, LIBC), (None, CUDA)], "futex", 0x2000, name="cuda-EvtHandlr")
    bystander = thread(10, [(None, LIBC), (None, PYTHON)], "semaphore", 0x3000)
    return [waiter, callback, helper, bystander]


def test_a_read_held_driver_rwlocks_likely_holder_is_the_thread_that_called_back_into_python():
    (e,) = likely_holders(_driver_deadlock())
    assert (e.waiter, e.owner, e.kind, e.address, e.source) == (1, 8, "rwlock-write", 0x1000, "heuristic")
    assert e.facts == DriverLockFacts(library=CUDA, library_frame=3, driver_library=True, waits_for_gil=True,
                                      callback=LibraryCallback("PyGILState_Ensure", 1), blocked_kind="gil")
    assert e.evidence is None   # no decoder identified it (and the analysis writes no sentence)


def test_with_the_gil_edge_the_likely_holder_closes_a_likely_cycle():
    edges = likely_holders(_driver_deadlock()) + [edge(8, 1, "gil", OwnerSource.GIL_STATE)]
    (c,), _ = find_cycles(edges)
    assert c.threads == [1, 8] and c.confidence == "likely"


def test_a_lock_whose_owner_is_recorded_gets_no_heuristic_edge():
    recorded = thread(1, [(None, CUDA)], "mutex", 0x10, owners=[5])
    unrecorded = thread(2, [(None, CUDA)], "futex", 0x20)
    (e,) = likely_holders([recorded, unrecorded])
    # thread 2's futex records no owner, and thread 1 is inside the same library, blocked
    assert (e.waiter, e.owner) == (2, 1)
    assert e.facts.waits_for_gil is False and e.facts.blocked_kind == "mutex" and e.facts.callback is None


def test_driver_helper_threads_are_never_suspects_nor_waiters():
    helper = thread(2, [(None, CUDA)], "futex", 0x20, name="cuda-EvtHandlr")
    other = thread(3, [(None, CUDA)], "futex", 0x30, name="nccl-progress")
    assert likely_holders([helper, other]) == []


def test_threads_waiting_for_the_gil_inside_the_library_exclude_those_merely_blocked_there():
    waiter = thread(1, [(None, LIBC), (None, VENDOR)], "mutex", 0x10)
    blocked = thread(2, [(None, LIBC), (None, VENDOR)], "condvar", 0x20)
    gil = thread(3, [(None, LIBC), (None, PYTHON), (None, VENDOR)], "gil", owners=[4], gil=GilState.WAITING)
    (e,) = likely_holders([waiter, blocked, gil])
    assert e.owner == 3 and e.facts.callback is None and e.facts.driver_library is False
    assert [x.owner for x in likely_holders([waiter, blocked])] == [2]


def test_a_callback_above_the_librarys_frame_is_not_evidence_of_entering_python_from_it():
    waiter = thread(1, [(None, VENDOR)], "mutex", 0x10)
    # the library runs below the callback: the thread called into the library from a Python callback
    t = thread(2, [(None, LIBC), (None, VENDOR), ("PyGILState_Ensure", PYTHON)], "gil", gil=GilState.WAITING)
    (e,) = likely_holders([waiter, t])
    assert e.facts.callback is None and e.facts.waits_for_gil is True


def test_ctypes_and_cffi_entry_points_count_as_callbacks():
    waiter = thread(1, [(None, VENDOR)], "mutex", 0x10)
    for function in ("_ctypes_callproc.cold", "_CallPythonObject", "closure_fcn", "PyGILState_Ensure"):
        t = thread(2, [(function, FFI), (None, VENDOR)], "gil", gil=GilState.WAITING)
        (e,) = likely_holders([waiter, t])
        assert e.facts.callback == LibraryCallback(function, 0)


def test_locks_of_the_python_runtime_or_of_glibc_alone_get_no_likely_holder():
    other = thread(2, [(None, PYTHON), (None, LIBC)], "futex", 0x20)
    in_python = thread(1, [(None, LIBC), (None, PYTHON)], "mutex", 0x10)
    in_ctypes = thread(1, [(None, "/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so")],
                       "mutex", 0x10)
    only_libc = thread(1, [(None, LIBC), (None, "/lib64/ld-linux-x86-64.so.2")], "mutex", 0x10)
    for waiter in (in_python, in_ctypes, only_libc):
        assert [e for e in likely_holders([waiter, other]) if e.waiter == 1] == []


def test_only_locks_that_may_record_no_owner_are_explained():
    for kind in ("semaphore", "condvar", "gil", "py-lock"):
        waiter = thread(1, [(None, VENDOR)], kind, 0x10)
        assert {e.waiter for e in likely_holders([waiter, thread(2, [(None, VENDOR)], "futex", 0x20)])} == {2}
    for kind in ("mutex", "rwlock", "rwlock-read", "rwlock-write", "futex"):
        waiter = thread(1, [(None, VENDOR)], kind, 0x10)
        assert [e.owner for e in likely_holders([waiter, thread(2, [(None, VENDOR)], "semaphore", 0x20)])
                if e.waiter == 1] == [2]


def test_threads_that_wait_in_the_same_library_on_locks_recording_no_owner_guess_no_holder_of_each_other():
    # gRPC's threads, each parked in absl's per-thread semaphore (a bare futex) below gRPC's own frames
    absl, grpc = "/usr/lib/x86_64-linux-gnu/libabsl_synchronization.so.20220623.0.0", \
        "/usr/lib/python3/dist-packages/grpc/_cython/cygrpc.cpython-311-x86_64-linux-gnu.so"
    frames = [("syscall", LIBC), ("AbslInternalPerThreadSemWait_debian3", absl), (None, grpc), ("start_thread", LIBC)]
    pool = [thread(tid, frames, "futex", 0x1000 * tid, gil=GilState.NO_PYTHON) for tid in range(1, 7)]
    assert likely_holders(pool) == []
    # one of them blocked elsewhere while inside the library (a mutex of its own) stays a suspect
    elsewhere = thread(9, [("pthread_mutex_lock", LIBC), (None, grpc), (None, absl)], "mutex", 0x99, owners=[3],
                       gil=GilState.NO_PYTHON)
    assert {(e.waiter, e.owner) for e in likely_holders(pool + [elsewhere])} == {(tid, 9) for tid in range(1, 7)}


def test_driver_libraries_and_helper_threads_are_told_by_name():
    assert is_driver_helper_thread("cuda-EvtHandlr") and is_driver_helper_thread("cuda00001400006")
    assert not is_driver_helper_thread("python3") and not is_driver_helper_thread(None)
    assert is_driver_library("/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    assert is_driver_library("/opt/nccl/lib/libnccl.so.2") and is_driver_library("libnvidia-ml.so.1")
    assert not is_driver_library("/usr/lib/libc.so.6") and not is_driver_library(None)


# ---- the sentence of the facts ----------------------------------------------------

def _evidence(facts):
    """The sentence of the facts `facts` give as JSON (read back into their record)."""
    return edge_evidence(Edge(waiter=1, owner=2, kind="rwlock-write", address=0x10, source="heuristic",
                              facts=from_data(DriverLockFacts, facts)))


def test_the_evidence_of_a_callback_holder_names_the_library_the_callback_and_the_gil():
    text = _evidence({"library": CUDA, "library_frame": 3, "driver_library": True, "waits_for_gil": True,
                      "callback": {"function": "PyGILState_Ensure", "frame": 1}, "blocked_kind": "gil"})
    assert text == ("frame #3 is in libcuda.so.1, which called back into Python (PyGILState_Ensure at frame #1), "
                    "and it now waits for the GIL: it entered libcuda.so.1 and has not left, so it likely holds "
                    "the lock (a driver library)")


def test_the_evidence_of_a_gil_waiter_without_a_callback_says_it_likely_holds_the_lock():
    text = _evidence({"library": VENDOR, "library_frame": 2, "driver_library": False, "waits_for_gil": True,
                      "callback": None, "blocked_kind": "gil"})
    assert text == "frame #2 is in libvendor.so and it waits for the GIL: it likely holds the lock it took inside " \
                   "libvendor.so"


def test_the_evidence_of_a_merely_blocked_thread_says_it_may_hold_the_lock():
    text = _evidence({"library": VENDOR, "library_frame": 1, "driver_library": False, "waits_for_gil": False,
                      "callback": None, "blocked_kind": "condvar"})
    assert text == "frame #1 is in libvendor.so and it is blocked (condvar): it may hold the lock"


# ---- guessed cycles: one per strongly connected component, and bounded ----------------

def _guess(w, o):
    return edge(w, o, "futex", OwnerSource.HEURISTIC)


def test_guessed_cycles_among_six_threads_are_one_deadlock_of_their_component_not_409():
    dense = [_guess(a, b) for a in range(1, 7) for b in range(1, 7) if a != b]   # 409 elementary cycles
    (d,), truncated = find_cycles(dense)
    assert not truncated and d.confidence == "likely" and len(d.threads) == 2 and len(d.edges) == 2
    assert d.component == {"threads": [1, 2, 3, 4, 5, 6], "cycles": 409, "all_counted": True, "guessed_edges": 30}


def test_a_component_with_one_guessed_cycle_lists_it_as_before_and_certain_cycles_stay_each_listed():
    (d,), _ = find_cycles([_guess(1, 2), edge(2, 1)])
    assert d.threads == [1, 2] and d.component is None and d.confidence == "likely"
    # two certain cycles through 1 and a guessed pair elsewhere in the same component
    edges = [edge(1, 2), edge(2, 1), edge(1, 3), edge(3, 1), _guess(2, 3), _guess(3, 2)]
    found, _ = find_cycles(edges)
    sure = [d.threads for d in found if d.confidence == "certain"]
    likely = [d for d in found if d.confidence == "likely"]
    assert sure == [[1, 2], [1, 3]] and len(likely) == 1 and likely[0].component["threads"] == [1, 2, 3]


def test_separate_components_are_separate_deadlocks():
    edges = [_guess(a, b) for a in (1, 2, 3) for b in (1, 2, 3) if a != b] + \
        [_guess(a, b) for a in (7, 8, 9) for b in (7, 8, 9) if a != b]
    found, _ = find_cycles(edges)
    assert [d.component["threads"] for d in found] == [[1, 2, 3], [7, 8, 9]]


def test_a_dense_graph_of_1000_guessing_threads_is_one_deadlock_within_the_step_bound(monkeypatch):
    # The step bound, not the clock, decides here (how long it takes is native/bench's to measure): with the
    # time bound out of reach a loaded host gives the same answer as an idle one.
    monkeypatch.setattr(waitgraph, "MAX_SECONDS", 3600.0)
    n = 1000
    dense = [_guess(a, b) for a in range(1, n + 1) for b in range(1, n + 1) if a != b]
    found, truncated = find_cycles(dense)
    (d,) = found
    assert d.component["threads"] == list(range(1, n + 1)) and not d.component["all_counted"]
    assert d.component["cycles"] >= 1 and not truncated


def test_a_dense_graph_of_1000_threads_of_certain_edges_stops_at_the_bounds(monkeypatch):
    n = 1000
    dense = [edge(a, b) for a in range(1, n + 1) for b in range(1, n + 1) if a != b]
    monkeypatch.setattr(waitgraph, "MAX_SECONDS", 2.0)
    found, truncated = find_cycles(dense)
    assert truncated and 0 < len(found) <= waitgraph.MAX_CYCLES


def test_the_components_of_a_graph_are_its_strongly_connected_sets_that_hold_a_cycle():
    out = {}
    for e in [edge(1, 2), edge(2, 3), edge(3, 1), edge(3, 4), edge(4, 5), edge(6, 6)]:
        out.setdefault(e.waiter, []).append(e)
    assert waitgraph.components(out) == [[1, 2, 3], [6]]

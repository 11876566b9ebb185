"""The analysis without gdb: snapshots recorded from real hangs
(testdata/snapshots, made by testdata/record_snapshots.py) are analysed
again here and must give what gdb printed, and what each scenario recorded
about itself; edited snapshots and garbage show each rule on its own."""
import copy
import glob
import json
import os

import pytest

import harness
from pyhang import analysis
from pyhang.analysis import python_state
from pyhang.model.report import NativeFrame, TargetInfo
from pyhang.model.snapshot import ProcessSnapshot, ThreadSnapshot
from pyhang.model.threading_facts import ThreadingState
from pyhang.model.waits import LockIdentification, PythonLockWait, from_data
from pyhang.render import json as render_json
from pyhang.render.locks import evidence as wait_evidence
from pyhang.render.text import render_text
from pyhang.model.python_facts import PyFrameFacts, PythonState
from pyhang.model.python_values import ObjectValue

SNAPSHOTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "testdata", "snapshots")
CASES = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(SNAPSHOTS, "*.json")))


def recorded(case):
    with open(os.path.join(SNAPSHOTS, case + ".json")) as f:
        return json.load(f)


def replay(doc, edit=None):
    """(report model, its JSON) of a recorded snapshot: its answers replayed
    through the analysis, or, to `edit` what was gathered first, the
    ProcessSnapshot they make analysed again (what only the first analysis
    asks, such as source lines, is then not in it)."""
    snap, report = analysis.from_snapshot(copy.deepcopy(doc["snapshot"]))
    if edit:
        edit(snap)
        report = analysis.build_report(snap)
    return report, render_json.to_json(report)


def role(doc, name):
    return next(t["tid"] for t in doc["truth"]["threads"] if t["role"] == name)


def test_every_recorded_case_is_present():
    assert set(CASES) >= {"lock_abba_unrecorded", "rlock_abba", "native_abba", "driver_rwlock_write",
                          "driver_rwlock_read", "gil_held_in_native", "native_locks", "fork_mutex_child",
                          "lock_held_across_join", "exit_joins_stuck_thread", "python_objects"}


@pytest.mark.parametrize("case", CASES)
def test_replayed_snapshot_gives_the_report_gdb_printed_when_it_was_recorded(case):
    """The snapshot holds all the report needs, and the output has not
    changed since the recording.  Recording again rewrites this expectation
    with its input, and so does `testdata/record_snapshots.py --rerender`
    (from the recorded snapshot alone, after a change to what a report says):
    that the report is right is test_replay_gives_what_each_scenario_recorded_
    of_itself's to prove."""
    doc = recorded(case)
    _, got = replay(doc)
    expected = dict(harness.validated_report(doc["report"]))
    # the version that made the report is the one running, not the one that recorded it
    got.pop("pyhang_version", None), expected.pop("pyhang_version", None)
    assert got == expected


def test_rerendering_the_recorded_reports_from_their_snapshots_moves_no_byte(tmp_path, monkeypatch, capsys):
    # GIVEN a copy of every recorded case, the reports of which the test above holds to their snapshots
    import record_snapshots
    for case in CASES:
        (tmp_path / (case + ".json")).write_bytes(open(os.path.join(SNAPSHOTS, case + ".json"), "rb").read())
    monkeypatch.setattr(record_snapshots, "OUT", str(tmp_path))
    # WHEN `record_snapshots.py --rerender` makes every report again from its snapshot
    record_snapshots.main(["--rerender"] + CASES)
    # THEN each file is the same to the byte, and says so
    for case in CASES:
        assert (tmp_path / (case + ".json")).read_bytes() == open(os.path.join(SNAPSHOTS, case + ".json"), "rb").read()
    assert capsys.readouterr().out.splitlines() == ["unchanged %s" % case for case in CASES]


# What each recorded scenario must give, in its own terms: the roles its
# threads recorded ("truth"), checked by hand against the scenario program.
# role → (wait kind, the syscall's name or the variable naming the object,
# the roles of its owners, owner source, confidence); deadlocks as (roles,
# confidence); verdicts as (kind, roles); fork hazards' kinds (none where not
# given; None: checked by a test of its own).  Written here,
# never recorded: recording a snapshot again cannot move them.
SLEEPS = ("syscall", "clock_nanosleep", [], "unknown", "certain")   # time.sleep
PAUSES = ("syscall", "pause", [], "unknown", "certain")
SCENARIOS = {
    "rlock_abba": {
        "waits": {"main": SLEEPS,
                  "holds-a-wants-b": ("py-rlock", "__main__.lock_b", ["holds-b-wants-a"], "lock-word", "certain"),
                  "holds-b-wants-a": ("py-rlock", "__main__.lock_a", ["holds-a-wants-b"], "lock-word", "certain")},
        "deadlocks": [(["holds-a-wants-b", "holds-b-wants-a"], "certain")]},
    "lock_abba_unrecorded": {   # a threading.Lock records no owner: each holder is likely, from its frames
        "waits": {"main": SLEEPS,
                  "holds-a-wants-b": ("py-lock", "__main__.lock_b", [], "unknown", "certain"),
                  "holds-b-wants-a": ("py-lock", "__main__.lock_a", [], "unknown", "certain")},
        "deadlocks": [(["holds-a-wants-b", "holds-b-wants-a"], "likely")]},
    "native_abba": {   # main joins the first thread (pthread_join(t1))
        "waits": {"main": ("thread-join", None, ["holds-a-wants-b"], "thread-tid", "certain"),
                  "holds-a-wants-b": ("mutex", None, ["holds-b-wants-a"], "lock-word", "certain"),
                  "holds-b-wants-a": ("mutex", None, ["holds-a-wants-b"], "lock-word", "certain")},
        "deadlocks": [(["holds-a-wants-b", "holds-b-wants-a"], "certain")]},
    "driver_rwlock_write": {   # the writer's rwlock records its owner
        "waits": {"holds-gil": ("rwlock-write", None, ["holds-driver-lock"], "lock-word", "certain"),
                  "holds-driver-lock": ("gil", None, ["holds-gil"], "gil-state", "certain")},
        "deadlocks": [(["holds-driver-lock", "holds-gil"], "certain")],
        "verdicts": [("gil-holder-blocked", ["holds-gil"])]},
    "driver_rwlock_read": {   # readers are not recorded: the holder is the driver heuristic's, likely
        "waits": {"holds-gil": ("rwlock-write", None, [], "unknown", "certain"),
                  "holds-driver-lock": ("gil", None, ["holds-gil"], "gil-state", "certain")},
        "deadlocks": [(["holds-driver-lock", "holds-gil"], "likely")],
        "verdicts": [("gil-holder-blocked", ["holds-gil"])]},
    "gil_held_in_native": {   # the holder sleeps in libc's pause with the GIL held
        "waits": {"waiter": ("gil", None, ["holder"], "gil-state", "certain"), "holder": PAUSES},
        "verdicts": [("gil-holder-blocked", ["holder"])]},
    "fork_mutex_child": {   # the child waits on a mutex a parent thread held at fork
        "waits": {"child": ("mutex", None, ["holds-mutex"], "lock-word", "certain")},
        "verdicts": [("owner-gone", ["child", "holds-mutex"])],
        "hazards": ["orphaned-lock", "threads-at-fork"]},
    "lock_held_across_join": {
        "waits": {"holds-lock-joins": ("py-join", None, ["waits-for-lock"], "thread-object", "certain"),
                  "waits-for-lock": ("py-lock", "__main__.config_lock", [], "unknown", "certain")},
        "deadlocks": [(["holds-lock-joins", "waits-for-lock"], "likely")]},
    "exit_joins_stuck_thread": {
        "waits": {"exits": ("py-join", None, ["never-ends"], "thread-object", "certain"),
                  "never-ends": ("py-event", "__main__.never", [], "unknown", "certain")},
        "verdicts": [("owners-unknown", ["never-ends"])]},
    "python_objects": {
        "waits": {"main": SLEEPS,
                  "queue-getter": ("py-queue-get", "__main__.EMPTY", [], "unknown", "certain"),
                  "queue-putter": ("py-queue-put", "__main__.FULL", [], "unknown", "certain"),
                  "sem-waiter": ("py-semaphore", "__main__.SEM", [], "unknown", "certain"),
                  "event-waiter": ("py-event", "__main__.EVENT", [], "unknown", "certain"),
                  "barrier-waiter": ("py-barrier", "__main__.BARRIER", [], "unknown", "certain"),
                  "future-waiter": ("py-future", "__main__.FUTURE", [], "unknown", "certain"),
                  "importer": ("py-event", None, [], "unknown", "certain"),   # holds the module lock meanwhile
                  "import-waiter": ("py-import-lock", None, ["importer"], "lock-word", "certain"),
                  "pool-worker-1": ("py-future", None, [], "unknown", "certain"),
                  "pool-worker-2": ("py-future", None, [], "unknown", "certain")},
        # most serious first; a thread another verdict explains is not also of unknown owner; the event
        # waiter is idle (nothing waits on it), the importer is not (the import-waiter waits on it)
        "verdicts": [("executor-starvation", ["pool-worker-1", "pool-worker-2"]),
                     ("nothing-can-wake", ["queue-getter"]),
                     ("nothing-can-wake", ["queue-putter"]),   # a full queue no other thread reaches
                     ("owners-unknown", ["sem-waiter", "barrier-waiter", "future-waiter", "importer"]),
                     ("idle", ["event-waiter"])]},
    "buffered_io": {   # each holder sleeps in write(2) holding its stream's lock
        "waits": {"main": SLEEPS,
                  "stdout-holder": ("syscall", "write", [], "unknown", "certain"),
                  "stdout-printer": ("py-buffered-io", None, ["stdout-holder"], "lock-word", "certain"),
                  "log-holder": ("syscall", "write", [], "unknown", "certain"),
                  "log-writer": ("py-buffered-io", None, ["log-holder"], "lock-word", "certain")},
        # (their pipes' read ends only this process holds, and nothing reads them: never an all-clear)
        "verdicts": [("unaccounted", ["stdout-holder", "log-holder"])]},
    "buffered_io_fork_child": {   # the child inherited the lock its parent's thread held: no owner here
        "waits": {"child": ("py-buffered-io", None, [], "unknown", "certain")},
        "verdicts": [("owner-gone", ["child"])],
        "hazards": ["orphaned-lock", "threads-at-fork"]},
    # each lock's waiter, holders, deadlocks and verdicts: from the fixture's records (test_native_locks_...)
    "native_locks": {"waits": {"main": SLEEPS}, "deadlocks": None, "verdicts": None},
}


def _roles(doc):
    """TID → role, as the scenario recorded them (a fork child is "child")."""
    roles = {t["tid"]: t["role"] for t in doc["truth"]["threads"]}
    if "child" in doc["truth"]:
        roles.setdefault(doc["truth"]["child"]["tid"], "child")
    return roles


def test_every_recorded_case_has_its_expectation_written_by_hand():
    assert sorted(SCENARIOS) == CASES


@pytest.mark.parametrize("case", sorted(SCENARIOS))
def test_replay_gives_what_each_scenario_recorded_of_itself(case):
    doc = recorded(case)
    _, rep = replay(doc)
    want = SCENARIOS[case]
    roles = _roles(doc)

    def named(tids):
        return [roles.get(t, t) for t in tids]

    def wait(b):
        if b is None:
            return None
        return (b["kind"], b["syscall"]["name"] if b["kind"] == "syscall" else b["name"], tuple(named(b["owners"])),
                b["owner_source"], b["confidence"])
    got = {}
    for t in rep["threads"]:
        if t["tid"] in roles:   # every thread with a role is expected
            got.setdefault(roles[t["tid"]], set()).add(wait(t["blocked_on"]))
    assert got == {role: {(k, n, tuple(o), s, c)} for role, (k, n, o, s, c) in want["waits"].items()}
    if want.get("deadlocks", []) is not None:
        assert sorted((sorted(named(d["threads"])), d["confidence"]) for d in rep["deadlocks"]) == \
            sorted((sorted(r), c) for r, c in want.get("deadlocks", []))
    if want.get("verdicts", []) is not None:
        assert [(v["kind"], named(v["threads"])) for v in rep["verdicts"]] == want.get("verdicts", [])
    assert [h["kind"] for h in rep["fork_hazards"]] == want.get("hazards", [])


# liblockfixture's kind of lock and way of waiting → the wait kind its waiter must have.
NATIVE_LOCK_KINDS = {("rwlock-write-held", "write"): "rwlock-write", ("rwlock-write-held", "read"): "rwlock-read",
                     ("rwlock-read-held", "write"): "rwlock-write", ("semaphore", "wait"): "semaphore",
                     ("condvar", "wait"): "condvar", ("futex", "wait"): "futex"}


def test_native_locks_each_waiter_waits_on_its_lock_held_by_the_thread_the_fixture_recorded():
    doc = recorded("native_locks")
    _, rep = replay(doc)
    threads = {t["tid"]: t for t in rep["threads"]}
    for r in doc["truth"]["records"]:
        b = threads[r["waiter"]]["blocked_on"]
        kind = "mutex" if r["lock"].startswith("mutex-") else NATIVE_LOCK_KINDS[(r["lock"], r["waiter_mode"])]
        # a holder the lock word records is named from it; readers and the rest are never guessed as sure
        owners = [r["holder"]] if r["holder"] is not None else []
        assert (b["kind"], b["address"], b["owners"]) == (kind, r["address"], owners), r
        assert b["owner_source"] == ("lock-word" if owners else "unknown"), r
        for holder in r["holders"]:   # each holder sleeps in pause(2), holding its lock
            h = threads[holder]["blocked_on"]
            assert (h["kind"], h["syscall"]["name"]) == ("syscall", "pause"), r
    # no lock here is part of a real cycle: any deadlock is the driver heuristic's guess, never certain
    assert all(d["confidence"] != "certain" and all(e["source"] == "heuristic" for e in d["edges"])
               for d in rep["deadlocks"])
    # a semaphore and a condition variable have no owner to name: said so, never an all-clear
    unowned = sorted(r["waiter"] for r in doc["truth"]["records"] if r["lock"] in ("semaphore", "condvar"))
    assert [(v["kind"], sorted(v["threads"])) for v in rep["verdicts"]] == [("owners-unknown", unowned)]


def test_rlock_abba_is_one_certain_deadlock_between_the_two_holders():
    doc = recorded("rlock_abba")
    _, rep = replay(doc)
    (d,) = rep["deadlocks"]
    assert d["confidence"] == "certain"
    assert sorted(d["threads"]) == sorted([role(doc, "holds-a-wants-b"), role(doc, "holds-b-wants-a")])
    assert {e["kind"] for e in d["edges"]} == {"py-rlock"} and {e["source"] for e in d["edges"]} == {"lock-word"}


def test_threads_blocked_with_no_owner_known_are_a_verdict_never_an_all_clear():
    # GIVEN threads blocked on locks that record no owner, and no likely holder
    state = {"status": "ok", "version": "3.11.2", "gils": [], "warnings": [],
             "threads": [{"tstate": 1, "native_tid": 10, "interp_id": 0, "frames": [], "holds_gil": False}]}
    snap = ProcessSnapshot(target=TargetInfo(kind="live", pid=10), python=from_data(PythonState, state), threads=[
        _thread(1, 10, python_lock={"kind": "py-lock", "object": 0x1000, "owner_source": "unknown"}),
        _thread(2, 11, lock={"kind": "semaphore", "address": 0x2000, "owners": [], "lock": {"value": 0}}),
        _thread(3, 12, registers={"orig_rax": 34})])
    report = analysis.build_report(snap)
    # THEN the verdict names both, and the text never says a plain "No deadlock found."
    (v,) = [v for v in render_json.to_json(report)["verdicts"] if v["kind"] == "owners-unknown"]
    assert v["threads"] == [10, 11]
    assert v["text"] == ("2 threads blocked, and pyhang names no thread that will end their waits: Thread 1 "
                         "(LWP 10) on threading.Lock 0x1000; Thread 2 (LWP 11) on semaphore 0x2000")
    text = render_text(report)
    assert "No deadlock found." not in text and "Blocked: 2 threads wait on objects whose owner pyhang cannot " \
        "name; no deadlock among the waits whose owners it can name." in text.splitlines()


def test_plain_lock_abba_is_a_likely_deadlock_through_the_threads_that_reference_each_lock():
    # threading.Lock records no owner: each holder is named from its frames, never as certain
    doc = recorded("lock_abba_unrecorded")
    _, rep = replay(doc)
    ab, ba = role(doc, "holds-a-wants-b"), role(doc, "holds-b-wants-a")
    (d,) = rep["deadlocks"]
    assert d["confidence"] == "likely" and sorted(d["threads"]) == sorted([ab, ba])
    assert {e["source"] for e in d["edges"]} == {"heuristic"} and {e["kind"] for e in d["edges"]} == {"py-lock"}
    for tid in (ab, ba):
        th = next(t for t in rep["threads"] if t["tid"] == tid)
        assert th["blocked_on"]["kind"] == "py-lock" and th["blocked_on"]["owner_source"] == "unknown"


def test_join_names_the_joined_thread_and_the_lock_holder_inside_its_with_block():
    doc = recorded("lock_held_across_join")
    _, rep = replay(doc)
    main, worker = role(doc, "holds-lock-joins"), role(doc, "waits-for-lock")
    (d,) = rep["deadlocks"]
    assert d["confidence"] == "likely"
    edges = {(e["waiter"], e["owner"]): e for e in d["edges"]}
    assert edges[(main, worker)]["kind"] == "py-join" and edges[(main, worker)]["source"] == "thread-object"
    assert edges[(worker, main)]["source"] == "heuristic" and "in main" in edges[(worker, main)]["evidence"]
    text = render_text(analysis.build_report(analysis.from_snapshot(doc["snapshot"])[0]))
    assert 'waits in Thread.join for Thread 2 (LWP %d) "%s" to exit' % (worker, doc["truth"]["worker_name"]) in text


def test_a_join_on_a_thread_that_is_not_known_is_never_a_join_edge():
    doc = recorded("lock_held_across_join")

    def forget_threads(snap):
        snap.threading = None
    _, rep = replay(doc, forget_threads)
    main = role(doc, "holds-lock-joins")
    th = next(t for t in rep["threads"] if t["tid"] == main)
    assert th["blocked_on"]["kind"] == "py-lock" and th["python_name"] is None
    assert not rep["deadlocks"] and main in next(v for v in rep["verdicts"] if v["kind"] == "owners-unknown")["threads"]


def test_interpreter_exit_joining_a_stuck_thread_is_named_so():
    doc = recorded("exit_joins_stuck_thread")
    _, rep = replay(doc)
    main, worker = role(doc, "exits"), role(doc, "never-ends")
    b = next(t for t in rep["threads"] if t["tid"] == main)["blocked_on"]
    assert b["kind"] == "py-join" and b["owners"] == [worker] and "interpreter exit" in b["detail"]


def test_interpreter_exit_joining_in_c_names_the_non_daemon_threads_as_likely():
    # GIVEN the exit snapshot as 3.13 gives it: threading._shutdown joins in C, on no Python lock
    doc = recorded("exit_joins_stuck_thread")
    main, worker = role(doc, "exits"), role(doc, "never-ends")

    def joined_in_c(snap):
        next(t for t in snap.threads if t.tid == main).python_lock = None
    _, rep = replay(doc, joined_in_c)
    # THEN main waits at exit for the one non-daemon thread threading knows of: likely, not certain
    b = next(t for t in rep["threads"] if t["tid"] == main)["blocked_on"]
    assert b["kind"] == "py-join" and b["owners"] == [worker] and b["confidence"] == "likely"
    assert "interpreter exit" in b["detail"] and b["detail"].endswith("[likely]")

    # AND a daemon thread is never waited for at exit
    def daemon_too(snap):
        joined_in_c(snap)
        for t in snap.threading.threads:
            t.daemon = True
    _, rep = replay(doc, daemon_too)
    b = next(t for t in rep["threads"] if t["tid"] == main)["blocked_on"]
    assert b is None or b["kind"] != "py-join"


def test_an_import_waits_for_the_thread_that_holds_the_module_lock():
    doc = recorded("python_objects")
    _, rep = replay(doc)
    b = next(t for t in rep["threads"] if t["tid"] == role(doc, "import-waiter"))["blocked_on"]
    assert b["kind"] == "py-import-lock" and b["owners"] == [role(doc, "importer")]
    assert [e for e in rep["edges"] if e["waiter"] == role(doc, "import-waiter")][0]["source"] == "lock-word"


def test_a_python_object_of_another_type_leaves_the_primitive_wait():
    # GIVEN the queue getter's `self` read as something that is not what Queue.get is about
    doc = recorded("python_objects")
    getter = role(doc, "queue-getter")

    def not_a_queue(snap):
        t = next(t for t in snap.threads if t.tid == getter)
        t.python_api.kind, t.python_api.type = "py-semaphore", "dict"
    _, rep = replay(doc, not_a_queue)
    # THEN the wait is the Condition below it, as the native search found it
    assert next(t for t in rep["threads"] if t["tid"] == getter)["blocked_on"]["kind"] == "py-condition"


def test_garbage_python_object_facts_give_a_wait_never_an_error():
    doc = recorded("python_objects")
    getter = role(doc, "queue-getter")

    def garbage(snap):
        t = next(t for t in snap.threads if t.tid == getter)
        t.python_api.attributes = {"maxsize": None, "queue": ObjectValue(kind="unreadable")}
    _, rep = replay(doc, garbage)
    b = next(t for t in rep["threads"] if t["tid"] == getter)["blocked_on"]
    assert b["kind"] == "py-queue-get" and "length unknown (maxsize unbounded)" in b["detail"]


def test_a_free_lock_or_a_fellow_waiter_is_never_a_likely_holder():
    doc = recorded("lock_abba_unrecorded")
    ab = role(doc, "holds-a-wants-b")

    def free(snap):
        next(t for t in snap.threads if t.tid == ab).python_lock.locked = False
    _, rep = replay(doc, free)
    assert not rep["deadlocks"] and not [e for e in rep["edges"] if e["waiter"] == ab]
    assert ab in next(v for v in rep["verdicts"] if v["kind"] == "owners-unknown")["threads"]


def test_native_abba_edges_come_from_the_mutex_lock_words():
    doc = recorded("native_abba")
    _, rep = replay(doc)
    (d,) = rep["deadlocks"]
    ab, ba = role(doc, "holds-a-wants-b"), role(doc, "holds-b-wants-a")
    assert d["confidence"] == "certain" and {e["source"] for e in d["edges"]} == {"lock-word"}
    assert sorted(d["threads"]) == sorted([ab, ba])
    edges = {(e["waiter"], e["owner"]): e for e in d["edges"]}
    assert edges[(ab, ba)]["address"] == doc["truth"]["b"] and edges[(ba, ab)]["address"] == doc["truth"]["a"]


def test_cycle_is_gone_when_a_lock_word_names_no_owner():
    doc = recorded("native_abba")
    (d,) = replay(doc)[1]["deadlocks"]

    def forget_one_owner(snap):
        t = next(t for t in snap.threads if t.tid == d["threads"][0])
        t.lock.owners = []
    _, rep = replay(doc, forget_one_owner)
    assert not [x for x in rep["deadlocks"] if x["confidence"] == "certain"]


def test_owner_that_is_no_thread_of_the_process_is_a_verdict():
    doc = recorded("native_abba")
    (d,) = replay(doc)[1]["deadlocks"]
    waiter = d["threads"][0]

    def owner_gone(snap):
        next(t for t in snap.threads if t.tid == waiter).lock.owners = [999999]
    report, rep = replay(doc, owner_gone)
    (v,) = [v for v in rep["verdicts"] if v["kind"] == "owner-gone"]
    assert v["threads"] == [waiter, 999999] and "LWP 999999 is not a thread of this process" in v["text"]
    assert next(t for t in rep["threads"] if t["tid"] == waiter)["blocked_on"]["owner_alive"] is False


@pytest.mark.parametrize("mode,confidence", [("write", "certain"), ("read", "likely")])
def test_driver_rwlock_and_gil_deadlock_is_as_sure_as_its_evidence(mode, confidence):
    doc = recorded("driver_rwlock_" + mode)
    _, rep = replay(doc)
    (d,) = rep["deadlocks"]
    assert d["confidence"] == confidence
    assert sorted(d["threads"]) == sorted([role(doc, "holds-gil"), role(doc, "holds-driver-lock")])
    kinds = {e["kind"] for e in d["edges"]}
    assert "gil" in kinds and "rwlock-write" in kinds
    if confidence == "likely":
        (h,) = [e for e in d["edges"] if e["source"] == "heuristic"]
        assert h["owner"] == role(doc, "holds-driver-lock") and h["evidence"]


def test_gil_holder_asleep_in_a_system_call_is_a_verdict():
    doc = recorded("gil_held_in_native")
    _, rep = replay(doc)
    holder = role(doc, "holder")
    assert rep["gil"]["holder_tid"] == holder
    (v,) = [v for v in rep["verdicts"] if v["kind"] == "gil-holder-blocked"]
    assert v["threads"] == [holder] and "pause system call" in v["text"]
    waiters = {t["tid"] for t in doc["truth"]["threads"] if t["role"] == "waiter"}
    assert set(rep["gil"]["waiters"]) == waiters


def test_fork_child_blocked_on_a_mutex_a_parent_thread_held_is_an_orphaned_lock():
    doc = recorded("fork_mutex_child")
    _, rep = replay(doc)
    child, holder = doc["truth"]["child"], doc["truth"]["holder"]
    (h,) = [h for h in rep["fork_hazards"] if h["kind"] == "orphaned-lock"]
    assert h["threads"] == [child["tid"]] and "LWP %d is not a thread of this process" % holder in h["evidence"]


def test_deeper_frames_are_wanted_only_below_a_library_that_is_not_the_systems():
    doc = recorded("driver_rwlock_read")
    snap = analysis.from_snapshot(doc["snapshot"])[0]
    report = analysis.threads(snap)
    assert analysis.frames_wanted(report, 8) and not analysis.frames_wanted(report, 16)
    for t in report.threads:
        t.native_frames = [f for f in t.native_frames if f.library and "libc.so" in f.library]
    assert analysis.frames_wanted(report, 8) == []


def _thread(num, tid, lock=None, python_lock=None, registers=None):
    """A thread asleep on a futex; `lock` and `python_lock` as the data of what the decoders found."""
    return ThreadSnapshot(num=num, tid=tid, name="t%d" % num, registers=registers or {"orig_rax": 202, "rdi": 0x10},
                          frames=[NativeFrame(pc=0x7f0000001000, function=None, library="/lib/libc.so.6")],
                          lock=from_data(LockIdentification, lock), python_lock=from_data(PythonLockWait, python_lock))


def test_garbage_snapshot_still_reports_every_thread():
    # GIVEN an unreadable interpreter and lock facts of unknown kinds and shapes
    snap = ProcessSnapshot(target=TargetInfo(kind="core", core="/x.core"),
                           python=from_data(PythonState, {"status": "unreadable", "threads": [], "gils": []}),
                           threads=[_thread(1, 10, lock={"kind": "something-new", "address": None, "owners": [10]}),
                                    _thread(2, 11, lock={"kind": "mutex", "address": 0x20, "owners": [12, 13]}),
                                    _thread(3, 12, registers={})])
    report = analysis.build_report(snap)
    doc = harness.validated_report(render_json.to_json(report))
    assert [t["tid"] for t in doc["threads"]] == [10, 11, 12]
    assert {t["gil"] for t in doc["threads"]} == {"unknown"}
    assert "the Python state could not be read (unreadable)" in doc["warnings"]
    text = render_text(report)
    assert "waits on something-new" in text and "LWP 13, which is not a thread of this process" in text


def test_threads_waiting_on_different_locks_are_never_printed_as_one():
    # GIVEN two threads with identical stacks, each on its own threading.Lock
    state = {"status": "ok", "version": "3.11.2", "gils": [], "warnings": [],
             "threads": [{"tstate": 1 + i, "native_tid": tid, "interp_id": 0, "frames": [], "holds_gil": False}
                         for i, tid in enumerate((10, 11, 12))]}
    locks = [{"kind": "py-lock", "object": obj, "owner_source": "unknown", "suspects": []}
             for obj in (0x1000, 0x2000, 0x2000)]
    snap = ProcessSnapshot(target=TargetInfo(kind="live", pid=10), python=from_data(PythonState, state),
                           threads=[_thread(i + 1, tid, python_lock=lk)
                                    for i, (tid, lk) in enumerate(zip((10, 11, 12), locks))])
    text = render_text(analysis.build_report(snap))
    # THEN the two on 0x2000 share a block, the one on 0x1000 has its own
    assert "blocked: waits to acquire threading.Lock 0x1000" in text
    assert text.count("blocked: waits to acquire threading.Lock 0x2000") == 1
    assert "and 1 more thread in the same state with the same stacks: LWP 12" in text


def test_workers_each_waiting_on_a_future_of_their_own_in_the_same_code_are_one_block_naming_each_future():
    from pyhang.model.kinds import GilState, OwnerSource, WaitKind
    from pyhang.model.report import BlockedOn, PythonFrame, Report, ThreadReport
    # GIVEN three pool workers with one stack, each waiting for the result of its own Future
    report = Report(target=TargetInfo(kind="live", pid=10))
    for i, tid in enumerate((11, 12, 13)):
        th = ThreadReport(tid=tid, gdb_num=i + 1, name="worker", gil=GilState.RELEASED, python_frames=[
            PythonFrame("Future.result", "/usr/lib/python3.11/concurrent/futures/_base.py", 451),
            PythonFrame("task", "/srv/app.py", 9)])
        th.blocked_on = BlockedOn(kind=WaitKind.PY_FUTURE, address=0x1000 * (i + 1), owners=[],
                                  owner_source=OwnerSource.UNKNOWN)
        report.threads.append(th)
    text = render_text(report)
    # THEN they are one block, which names the Future each waits on
    assert "and 2 more threads in the same state with the same stacks: LWP 12, LWP 13" in text, text
    assert "each waits on an object of its own: 0x1000, 0x2000, 0x3000" in text, text
    assert text.count("Python stack (innermost first):") == 1


def test_gil_state_follows_the_futex_each_thread_sleeps_on():
    view = python_state.PythonView(from_data(PythonState, {"status": "ok", "threads": [
        {"tstate": 1, "native_tid": 10, "holds_gil": True, "frames": []},
        {"tstate": 2, "native_tid": 11, "holds_gil": False, "frames": []}],
        "gils": [{"address": 0x5000, "size": 0x100, "interp_id": -1, "holder_tstate": 1, "locked": True}]}))
    assert python_state.gil_state(view, 10, {}) == "holds"
    assert python_state.gil_state(view, 11, {"orig_rax": 202, "rdi": 0x5010}) == "waiting"
    assert python_state.gil_state(view, 11, {"orig_rax": 202, "rdi": 0x6000}) == "released"
    assert python_state.gil_state(view, 12, {}) == "no-python"


def test_a_pthread_join_is_found_from_the_tid_word_of_the_joined_threads_struct_pthread():
    from pyhang.analysis import locks
    bases = locks.sorted_bases({0x7000_1000: 5, 0x7001_0000: 6})
    assert locks.joined_thread(0x7000_1010, 5, bases) == 5      # inside thread 5's struct, holding its TID
    assert locks.joined_thread(0x7000_1010, 6, bases) is None   # inside it, but another value
    assert locks.joined_thread(0x7000_0500, 5, bases) is None   # below every struct pthread
    assert locks.joined_thread(0x7000_3000, 5, bases) is None   # past thread 5's struct
    assert locks.joined_thread(0x7001_0008, 6, {0x7001_0000: 6}) == 6


def test_an_rlock_owner_the_decoder_did_not_map_is_the_thread_whose_struct_pthread_it_is_or_is_gone():
    doc = recorded("rlock_abba")
    waiter, holder = role(doc, "holds-a-wants-b"), role(doc, "holds-b-wants-a")

    def unmapped(snap):
        next(t for t in snap.threads if t.tid == waiter).python_lock.owner_tid = None
    _, rep = replay(doc, unmapped)
    b = next(t for t in rep["threads"] if t["tid"] == waiter)["blocked_on"]
    assert b["owners"] == [holder] and b["owner_source"] == "lock-word" and b["owner_alive"] is True
    assert len(rep["deadlocks"]) == 1

    # a recorded pthread_t that is no thread's struct pthread (a fork child's copy): gone, never "owners unknown"
    def gone(snap):
        lock = next(t for t in snap.threads if t.tid == waiter).python_lock
        lock.owner_tid, lock.owner_thread_id = None, 0x7f0000abc700
    _, rep = replay(doc, gone)
    b = next(t for t in rep["threads"] if t["tid"] == waiter)["blocked_on"]
    assert b["owners"] == [] and "held by pthread_t 0x7f0000abc700, which is no thread of this process" in b["detail"]
    (v,) = [v for v in rep["verdicts"] if v["kind"] == "owner-gone"]
    assert v["threads"] == [waiter] and v["facts"]["owner_ident"] == 0x7f0000abc700


def test_interpreter_exit_on_3_13_is_certain_when_parked_on_a_threads_handle_else_likely():
    from pyhang.analysis.threading import PythonThreads, shutdown_wait

    class View:
        threads = from_data(PythonState, {"threads": [{"thread_id": 1, "native_tid": 10}, {"thread_id": 2, "native_tid": 11},
                                        {"thread_id": 3, "native_tid": 12}]}).threads
    threading = from_data(ThreadingState, {"threads": [
        {"object": 0x100, "name": "MainThread", "native_id": 10, "daemon": False, "handle_struct": 0x5000},
        {"object": 0x200, "name": "stuck", "native_id": 11, "daemon": False, "handle_struct": 0x6000},
        {"object": 0x300, "name": "other", "native_id": 12, "daemon": False, "handle_struct": 0x7000}]})
    threads = PythonThreads(threading, View())
    exiting = [PyFrameFacts(function="_shutdown", file="/usr/lib/python3.14/threading.py")]
    # GIVEN main parked on the exit event inside the second Thread's handle (0x6000 + 0x39)
    b = shutdown_wait(exiting, threads, 10, PythonLockWait(parking_address=0x6039))
    # THEN that thread is the one joined, certain
    assert (b.owners, b.confidence) == ([11], "certain") and "_handle" in wait_evidence(b)
    # AND parked on nothing a handle holds: the non-daemon threads, likely
    b = shutdown_wait(exiting, threads, 10, PythonLockWait(parking_address=0x9000))
    assert sorted(b.owners) == [11, 12] and b.confidence == "likely"
    assert shutdown_wait(exiting, threads, 10, None).confidence == "likely"

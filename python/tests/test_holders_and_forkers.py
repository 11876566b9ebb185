"""Which explanation a lock that records no owner gets, and whose advice a
fork hazard gives: a manager server's Lock with no likely holder is a
holder-exited verdict, never an orphaned-at-fork hazard; the same wait
outside a manager in a fork child that lost parent threads stays the fork
hazard; a gunicorn worker's hazards get gunicorn's advice, others
multiprocessing's.  And the words of waits pyhang names now: a SimpleQueue
get, an unknown-owner wait in a system call."""
from pyhang.analysis import forks, holders
from pyhang.analysis.locks import from_python
from pyhang.model.fork_facts import ForkFacts
from pyhang.model.kinds import Confidence, Forker, HazardKind, HolderEvidence, QueueType, VerdictKind, WaitKind
from pyhang.model.references import ObjectPath
from pyhang.model.report import BlockedOn, Edge, PythonFrame, Report, TargetInfo, ThreadReport
from pyhang.model.verdict_facts import UnknownOwnerWait
from pyhang.model.waits import PythonLockDetail, PythonLockWait, from_data
from pyhang.render.forks import hazard_advice
from pyhang.render.locks import summary
from pyhang.render.names import ThreadNames
from pyhang.render.verdicts import folded_waits, verdict_advice, verdict_text


LOCK = 0x7f0000001000
SERVE = ("Server.serve_client", "/usr/lib/python3.11/multiprocessing/managers.py", 271)
APP = ("handler", "/srv/app.py", 12)
GUNICORN = ("Arbiter.spawn_worker", "/usr/lib/python3/dist-packages/gunicorn/arbiter.py", 589)
LOST = from_data(ForkFacts, {"descriptors": [{"address": 1, "exited": False}],
                             "process": {"same_address_space": True, "ppid": 7, "exe": "/usr/bin/python3", "parent_exe": "/usr/bin/python3", "mapped": {"exe": 4194304, "libc": 140000000000000, "heap": 0}, "parent_mapped": {"exe": 4194304, "libc": 140000000000000, "heap": 0}}})


def waiter(frames, suspects=(), locked=True):
    lock = PythonLockDetail(suspects=list(suspects), locked=locked)
    return ThreadReport(tid=101, gdb_num=2, python_frames=[PythonFrame(*f) for f in frames],
                        blocked_on=BlockedOn(kind=WaitKind.PY_LOCK, address=LOCK, python=lock))


def report(*threads, edges=()):
    r = Report(target=TargetInfo(kind="live", pid=100))
    r.threads = [ThreadReport(tid=100, gdb_num=1)] + list(threads)
    r.edges = list(edges)
    return r


def test_a_managed_lock_nobody_alive_references_has_an_exited_holder_not_a_fork_copy():
    rep = report(waiter([("acquire", "<managed>", 1), SERVE]))
    (v,) = holders.verdicts(rep)
    assert (v.kind, v.threads) == (VerdictKind.HOLDER_EXITED, [101])
    assert (v.facts.evidence, v.facts.confidence) == (HolderEvidence.MANAGER_CLIENT, Confidence.LIKELY)
    assert v.facts.frame.function == "Server.serve_client"
    # the fork child that lost a parent thread at fork does not claim the lock as a copy
    assert not [h for h in forks.analyse(rep, LOST).hazards if h.kind == HazardKind.ORPHANED_LOCK]
    text = verdict_text(v, ThreadNames(rep.threads))
    assert text.startswith("Thread 2 (LWP 101) waits on threading.Lock 0x%x for a client of a multiprocessing " % LOCK)
    assert text.endswith("[likely: another client may still hold it]")
    assert "spawn" not in verdict_advice(v)


def test_a_lock_with_a_likely_holder_or_outside_a_manager_has_no_exited_holder():
    for why, t, edges in (
            ("another thread references it", waiter([SERVE], suspects=[100]), ()),
            ("it is not locked", waiter([SERVE], locked=False), ()),
            ("the waiter waits on a likely holder", waiter([SERVE]), [Edge(waiter=101, owner=100, kind="py-lock", address=LOCK, source="heuristic")]),
            ("not a manager's server", waiter([APP]), ())):
        assert holders.verdicts(report(t, edges=edges)) == [], why
    # outside a manager, a fork child that lost a parent thread keeps the orphaned-at-fork hazard
    (h,) = [h for h in forks.analyse(report(waiter([APP])), LOST).hazards if h.kind == HazardKind.ORPHANED_LOCK]
    assert h.variant == "python-lock" and h.facts.forked_by == Forker.OTHER
    assert "spawn" in hazard_advice(h)


def test_a_gunicorn_workers_fork_hazards_get_gunicorns_advice():
    rep = report(waiter([APP, ("SyncWorker.handle_request", "/usr/lib/python3/dist-packages/gunicorn/workers/sync.py",
                               178), GUNICORN]))
    found = forks.analyse(rep, LOST).hazards
    by_kind = {h.kind: h for h in found}
    assert {HazardKind.ORPHANED_LOCK, HazardKind.THREADS_AT_FORK} <= set(by_kind)
    for h in found:
        assert h.facts.forked_by == Forker.GUNICORN
    for kind in (HazardKind.ORPHANED_LOCK, HazardKind.THREADS_AT_FORK):
        advice = hazard_advice(by_kind[kind])
        assert "--preload" in advice and "post_fork" in advice and "spawn" not in advice, kind


def test_a_simplequeue_get_is_a_queue_get_on_that_queue():
    frame = {"function": "_handle_tasks", "file": "/usr/lib/python3.11/multiprocessing/pool.py", "line": 513}
    b = from_python(from_data(PythonLockWait, {"kind": WaitKind.PY_QUEUE_GET, "object": LOCK, "confidence": "certain",
                                               "frame": frame}))
    assert (b.kind, b.address, b.api.type) == (WaitKind.PY_QUEUE_GET, LOCK, QueueType.SIMPLE)
    b.name = ObjectPath(module="__main__", variable="tasks")
    assert summary(b, ThreadNames([])) == (
        "waits to get from queue.SimpleQueue 0x%x (__main__.tasks): a SimpleQueue's get waits only while it is empty "
        "(unbounded, called from _handle_tasks (pool.py line 513))" % LOCK)


def test_an_unknown_owner_wait_in_a_system_call_names_the_call():
    names = ThreadNames([(1, 100), (2, 101)])
    waits = [UnknownOwnerWait(tid=100, kind=WaitKind.SYSCALL, address=None, name=None, call="read",
                              link="pipe:[42]"),
             UnknownOwnerWait(tid=101, kind=WaitKind.SYSCALL, address=None, name=None, call="accept4", link=None)]
    assert folded_waits(waits, names) == ("Thread 1 (LWP 100) on the read system call on pipe:[42]; "
                                          "Thread 2 (LWP 101) on the accept4 system call")

"""Waits for the internal lock of a buffered I/O object, without gdb: on
snapshots recorded from testdata/scenarios/py_buffered.py (threads, and a
fork child), and on edited copies that show each rule on its own."""
import pytest

from pyhang import analysis

from test_analysis import recorded, replay, role


def blocked(rep, tid):
    return next(t for t in rep["threads"] if t["tid"] == tid)["blocked_on"]


def test_a_print_waiting_for_stdouts_writer_names_the_thread_the_writer_records_as_holding_it():
    doc = recorded("buffered_io")
    _, rep = replay(doc)
    printer, holder = role(doc, "stdout-printer"), role(doc, "stdout-holder")
    b = blocked(rep, printer)
    assert b["kind"] == "py-buffered-io" and b["address"] == doc["truth"]["stdout_buffer"]
    assert b["owners"] == [holder] and b["owner_source"] == "lock-word" and b["owner_alive"] is True
    assert b["detail"].startswith("waits for the internal lock of <_io.BufferedWriter name='<stdout>'> 0x%x "
                                  "(sys.stdout): held by " % doc["truth"]["stdout_buffer"])
    (e,) = [e for e in rep["edges"] if e["waiter"] == printer]
    assert e["owner"] == holder and e["source"] == "lock-word"


@pytest.mark.parametrize("waiter,holder", [("stdout-printer", "stdout-holder"), ("log-writer", "log-holder")])
def test_a_recorded_holder_the_decoder_did_not_map_is_the_thread_whose_struct_pthread_it_is(waiter, holder):
    doc = recorded("buffered_io")
    w = role(doc, waiter)

    def unmapped(snap):
        next(t for t in snap.threads if t.tid == w).python_lock.owner_tid = None
    _, rep = replay(doc, unmapped)
    b = blocked(rep, w)
    assert b["owners"] == [role(doc, holder)] and b["owner_source"] == "lock-word" and b["owner_alive"] is True


def test_a_fork_childs_copy_held_by_a_parent_thread_is_an_owner_gone_verdict_and_an_orphaned_lock():
    doc = recorded("buffered_io_fork_child")
    child = doc["truth"]["child"]["tid"]
    _, rep = replay(doc)
    b = blocked(rep, child)
    assert b["kind"] == "py-buffered-io" and b["owners"] == [] and b["address"] == doc["truth"]["log_buffer"]
    snapshot = analysis.from_snapshot(doc["snapshot"])[0]
    ident = next(t for t in snapshot.threads if t.tid == child).python_lock.owner_thread_id
    assert "held by pthread_t 0x%x, which is no thread of this process" % ident in b["detail"]
    (v,) = [v for v in rep["verdicts"] if v["kind"] == "owner-gone"]
    assert v["threads"] == [child] and v["facts"]["owner_ident"] == ident and "0x%x" % ident in v["text"]
    assert not [v for v in rep["verdicts"] if v["kind"] == "owners-unknown"]
    (h,) = [h for h in rep["fork_hazards"] if h["kind"] == "orphaned-lock"]
    assert h["confidence"] == "certain" and "pthread_t 0x%x" % ident in h["evidence"]
    # AND that pthread_t is the descriptor fork left of the parent thread that held it
    assert "it is the descriptor of a parent thread that fork did not copy, a Python thread" in h["evidence"]


def test_an_unmapped_holder_is_never_called_gone_when_some_threads_struct_pthread_is_unknown():
    doc = recorded("buffered_io_fork_child")
    child = doc["truth"]["child"]["tid"]

    def no_fs_base(snap):
        next(t for t in snap.threads if t.tid == child).registers.pop("fs_base")
    _, rep = replay(doc, no_fs_base)
    assert not [v for v in rep["verdicts"] if v["kind"] == "owner-gone"]
    (v,) = [v for v in rep["verdicts"] if v["kind"] == "owners-unknown"]
    assert v["threads"] == [child]


def test_a_buffered_lock_recording_no_holder_has_no_owner_and_is_an_owners_unknown_verdict():
    doc = recorded("buffered_io")
    w = role(doc, "log-writer")

    def free(snap):
        lock = next(t for t in snap.threads if t.tid == w).python_lock
        lock.owner_tid, lock.owner_thread_id = None, 0
    _, rep = replay(doc, free)
    b = blocked(rep, w)
    assert b["owners"] == [] and b["detail"].endswith("no thread is recorded as its holder")
    assert w in next(v for v in rep["verdicts"] if v["kind"] == "owners-unknown")["threads"]

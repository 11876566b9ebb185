"""The internal lock of an io.BufferedWriter records the thread holding it:
a thread waiting for it (print() or a write on a file) names the buffered
object as Python's repr() does and its holder, for certain; in a fork child
whose copy of the lock was taken by a parent thread, the holder is no
thread of the process.  On every version, live and from the core."""
import os

import pytest

import harness

SCENARIO = os.path.join(harness.SCENARIOS, "py_buffered.py")


@pytest.mark.parametrize("python", harness.interpreter_params())
def test_waits_for_a_buffered_writer_name_the_stream_and_the_thread_holding_its_lock(scenario, python):
    # GIVEN threads stuck writing to full pipes inside sys.stdout's and LOG's BufferedWriters,
    # and two threads waiting for those writers' locks: print() to stdout, print(file=LOG)
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, SCENARIO, "threads"], env=env)
    waits = {"stdout-printer": ("stdout-holder", s.truth["stdout_buffer"], "name='<stdout>'", "sys.stdout"),
             "log-writer": ("log-holder", s.truth["log_buffer"], "name=%d" % s.truth["log_fd"], None)}
    for where, report in (("live", harness.report_json(pid=s.pid)),
                          ("core", harness.report_json(executable=exe, core=s.gcore()))):
        threads = {t["tid"]: t for t in report["threads"]}
        edges = {(e["waiter"], e["owner"]): e for e in report["edges"]}
        for waiter_role, (holder_role, buffer_id, name, found_in) in waits.items():
            waiter, holder = harness.role_tid(s, waiter_role), harness.role_tid(s, holder_role)
            b = threads[waiter]["blocked_on"]
            # THEN the waiter names the BufferedWriter, as repr() names it, and the thread holding its lock
            assert b["kind"] == "py-buffered-io" and b["address"] == buffer_id, (where, waiter_role, b)
            assert b["owners"] == [holder] and b["owner_source"] == "lock-word", (where, waiter_role, b)
            assert b["owner_alive"] is True and b["confidence"] == "certain", (where, waiter_role, b)
            assert b["detail"].startswith("waits for the internal lock of <_io.BufferedWriter %s> 0x%x%s: held by "
                                          % (name, buffer_id, " (%s)" % found_in if found_in else "")), \
                (where, b["detail"])
            assert "LWP %d" % holder in b["detail"], (where, b["detail"])
            # AND the wait-for graph has that certain edge; the holder is the one stuck in write(2)
            assert edges[(waiter, holder)]["source"] == "lock-word", where
            h = threads[holder]["blocked_on"]
            assert h["kind"] == "syscall" and h["syscall"]["name"] == "write", (where, holder_role, h)
        # AND no verdict calls these waits' owners unknown
        for v in report["verdicts"]:
            assert not {harness.role_tid(s, r) for r in waits} & set(v["threads"]), (where, v)


@pytest.mark.parametrize("python", harness.interpreter_params())
def test_a_fork_child_waiting_for_a_buffered_writer_locked_by_a_parent_thread_is_told_its_holder_is_gone(
        scenario, python):
    # GIVEN a parent thread holding LOG's BufferedWriter lock when the main thread forked,
    # and the fork child printing to LOG
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, SCENARIO, "fork"], env=env)
    child = s.truth["child"]
    for where, report in (("live", harness.report_json(pid=child["pid"])),
                          ("core", harness.report_json(executable=exe, core=harness.gcore(child["pid"], s.tmp)))):
        (t,) = [t for t in report["threads"] if t["tid"] == child["tid"]]
        b = t["blocked_on"]
        # THEN the child waits for that writer's lock, held by a pthread_t that is no thread of the child
        assert b["kind"] == "py-buffered-io" and b["address"] == s.truth["log_buffer"], (where, b)
        assert b["owners"] == [], (where, b)
        assert "<_io.BufferedWriter name=%d>" % s.truth["log_fd"] in b["detail"], (where, b["detail"])
        assert "which is no thread of this process" in b["detail"], (where, b["detail"])
        # AND that is said as an owner-gone verdict and an orphaned lock, never as owners unknown
        kinds = {v["kind"]: v for v in report["verdicts"]}
        assert "owners-unknown" not in kinds, (where, kinds)
        gone = kinds["owner-gone"]
        assert gone["threads"] == [child["tid"]] and gone["facts"]["owner_ident"], (where, gone)
        (h,) = [h for h in report["fork_hazards"] if h["kind"] == "orphaned-lock"]
        assert h["confidence"] == "certain" and h["threads"] == [child["tid"]], (where, h)
        # AND the pthread_t it records is the descriptor fork left of the parent thread that held it
        assert "the descriptor of a parent thread that fork did not copy" in h["evidence"], (where, h)

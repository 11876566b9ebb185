"""The answer comes first: the report's first line says what is wrong
(the JSON's `headline` is that line), each finding follows most serious
first with its next step (`advice`, text and JSON), and idle threads (an
Event, a Condition, an executor between tasks, with nothing waiting on
them) are one folded line, never "blocked, owner unknown" — while the
main thread waiting stays a finding.  Live and from a core."""
import os

import pytest

import harness

PY = "/usr/bin/python3.11"
IDLERS = 24


def answer(text):
    """The report's lines from its first finding to the first thread block."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.endswith(" threads") or l.endswith(" thread")) + 2
    end = next(i for i in range(start, len(lines)) if lines[i] == "")
    return lines[start:end]


def both(s, exe):
    """(where, JSON report, text report) live and from a core."""
    return harness.cli_live_and_core_reports(s, exe, text=True, look=True)


def idle_params():
    """Debian's 3.11, pyenv's 3.6 (its pool's queue is a queue.Queue) and newest (a SimpleQueue), and Debian
    unstable's 3.14 in its root file system."""
    found = dict(harness.interpreters())
    names = ["debian-3.11"] + [n for n in found if n.startswith("pyenv-3.6")] + \
        [n for n in sorted(found) if n.startswith(("pyenv-3.13", "debian-sid-3.14"))]
    return [pytest.param(found[n], id=n) for n in names if n in found]


@pytest.mark.parametrize("python", idle_params())
def test_idle_threads_are_one_folded_line_and_the_main_thread_waiting_stays_a_finding(scenario, python):
    # GIVEN 24 threads in one Event.wait, an idle ThreadPoolExecutor, a Condition.wait, a thread that
    # another joins, and a main thread waiting for an Event nobody sets
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "idle_threads.py"), IDLERS], env=env)
    roles = {}
    for t in s.truth["threads"]:
        roles.setdefault(t["role"], []).append(t["tid"])
    for where, doc, text in both(s, exe):
        verdicts = {v["kind"]: v for v in doc["verdicts"]}
        # THEN the waiting threads nothing waits on are idle: the Event's, the Condition's, the pool's
        idle = verdicts["idle"]
        assert sorted(idle["threads"]) == sorted(roles["event-idle"] + roles["condition-idle"] + roles["pool-idle"])
        by_tid = {w["tid"]: w for w in idle["facts"]["waits"]}
        assert {by_tid[t]["address"] for t in roles["event-idle"]} == {s.truth["stop"]}, where
        assert by_tid[roles["condition-idle"][0]]["address"] == s.truth["condition"], where
        pool = {by_tid[t]["work_queue"] for t in roles["pool-idle"]}
        assert pool == {s.truth["pool_queue"]}, (where, pool)
        assert idle["advice"] is None, where
        # AND the main thread, and the thread another joins, are blocked with no owner named, with advice
        unknown = verdicts["owners-unknown"]
        assert sorted(unknown["threads"]) == sorted(roles["main"] + roles["joined"]), (where, unknown)
        assert unknown["advice"], where
        # (waits no thread is known to end: never an all-clear; from the core one look, exit 4; live, the second
        # look saw them, and every thread that could end them, not move: a hang, exit 5, said first)
        lines = answer(text)
        assert lines[0] == doc["headline"], (where, lines)
        if where == "live":
            assert doc["exit_status"] == 5 and doc["headline"].startswith("Hung without a deadlock: blocked threads "
                                                                          "made no progress"), (where, doc["headline"])
            assert lines[1].startswith("No progress: 2 threads") and lines[2].startswith("  advice: "), (where, lines)
            lines = lines[:1] + lines[3:]
        else:
            assert doc["exit_status"] == 4 and doc["headline"].startswith("Blocked: 2 threads wait on objects"), where
        # AND the text says it in that order, the 24 Event waiters folded into one part with a count
        assert lines[1].startswith("Owner unknown: 2 threads blocked") and lines[2].startswith("  advice: ")
        assert lines[3].startswith("Idle: %d threads wait" % (IDLERS + 4)), (where, lines)
        assert "%d threads on threading.Event 0x%x (__main__.STOP): " % (IDLERS, s.truth["stop"]) in lines[3]
        assert "and %d more" % (IDLERS - 4) in lines[3] and len(lines[3]) < 700, (where, len(lines[3]))
        assert "No deadlock found" not in text, where


def test_a_starving_pool_is_the_first_line_and_each_finding_has_its_next_step(scenario):
    # GIVEN a ThreadPoolExecutor starving itself, a Queue.get nothing can fill, a Queue.put nothing can drain,
    # and waits no thread ends
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "py_objects.py")])
    for where, doc, text in both(s, PY):
        # THEN the first line says what hangs, most serious first; the JSON's headline is that line
        lines = answer(text)
        assert lines[0] == doc["headline"] == \
            "Hung without a deadlock: a ThreadPoolExecutor starves itself; a Queue.get nothing can fill; " \
            "a Queue.put nothing can drain.", where
        # AND the findings follow most serious first, each hang with its next step
        kinds = [v["kind"] for v in doc["verdicts"]]
        assert kinds == ["executor-starvation", "nothing-can-wake", "nothing-can-wake", "owners-unknown", "idle"], \
            (where, kinds)
        titles = [l.split(":")[0] for l in lines[1:] if not l.startswith(("  ", "Second look", "One look"))]
        assert titles == ["Starvation", "Nothing can wake", "Nothing can wake", "Owner unknown", "Idle"], \
            (where, titles)
        for v in doc["verdicts"][:4]:
            assert v["advice"] and "  advice: " + v["advice"] in lines, (where, v["kind"])
        assert "second executor" in doc["verdicts"][0]["advice"], where
        assert doc["exit_status"] == 5, where


def test_a_deadlock_has_its_next_step_in_text_and_json(scenario):
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py")])
    for where, doc, text in both(s, PY):
        (d,) = doc["deadlocks"]
        assert doc["headline"] == "Found one deadlock (%s)." % d["confidence"], where
        assert "one order in every thread" in d["advice"] and "  advice: " + d["advice"] in text, where


def test_a_loop_blocked_inside_the_standard_library_points_at_the_programs_own_call(scenario):
    # GIVEN a coroutine that reads a socket file object: it blocks in socket.py, below its own line
    script = os.path.join(harness.SCENARIOS, "loop_blocked.py")
    s = scenario([PY, "-u", script, "socket"])
    for where, doc, text in both(s, PY):
        (v,) = [v for v in doc["verdicts"] if v["kind"] == "asyncio-loop-blocked"]
        # THEN the verdict names the program's frame that made the call, and the library frame it is inside
        assert v["facts"]["program_frame"] == {"function": "handler", "file": script, "line": s.truth["call_line"]}
        assert v["facts"]["frame"]["file"].endswith("/socket.py"), (where, v["facts"]["frame"])
        assert 'at File "%s", line %d, in handler, inside ' % (script, s.truth["call_line"]) in v["text"], v["text"]
        assert "(socket.py)" in v["text"] and doc["exit_status"] == 5, where

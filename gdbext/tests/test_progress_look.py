"""The command line's second look: after its own look, `pyhang report -p`
looks twice more without stopping the process and says per blocked thread
whether it moved; waits pyhang cannot name that did not move, while nothing
that could end them moved, are a hang (exit 5); `--once` takes one look and
says so; a thread that runs keeps the waits unknown.  Against what the
scenarios recorded about themselves."""
import json
import os

import pytest

import harness

PY = "/usr/bin/python3.11"
IDLERS = "4"


def report(*args):
    status, out, err = harness.pyhang_cli("report", "--json", *args, look=True)
    doc = harness.validated_report(json.loads(out))
    assert doc["exit_status"] == status, err
    return doc


def test_waits_nothing_can_end_that_did_not_move_are_a_hang_and_one_look_says_it_is_one(scenario):
    # GIVEN a main thread and a joined thread waiting on Events nothing sets, every other thread idle in a wait
    # only the process's own threads could end
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "idle_threads.py"), IDLERS])
    stuck = sorted(harness.role_tid(s, r) for r in ("main", "joined"))
    doc = report("-p", s.pid)
    # THEN the second look saw no thread move, and the two waits are a hang without a cycle
    look = doc["second_look"]
    assert look["interval"] == 0.5 and look["moved"] == [] and look["problem"] is None, look
    assert set(stuck) <= set(look["no_progress"])
    (v,) = [v for v in doc["verdicts"] if v["kind"] == "no-progress"]
    assert sorted(v["threads"]) == stuck and doc["exit_status"] == 5
    assert all(doc_t["moved"] == [] for doc_t in doc["threads"] if doc_t["tid"] in stuck)
    assert doc["headline"] == "Hung without a deadlock: blocked threads made no progress and nothing can end their " \
                              "waits."
    # AND with --once: one look, the waits unknown (exit 4), no second-look facts
    once = report("--once", "-p", s.pid)
    assert once["second_look"] is None and once["exit_status"] == 4
    assert all(t["moved"] is None for t in once["threads"])
    status, text, _ = harness.pyhang_cli("report", "--once", "-p", s.pid)
    assert "One look: whether these waits move, `pyhang report -p %d` says" % s.pid in text, text[:2000]
    # AND --interval chooses the time between the looks, and a report read without stopping looks again too
    assert report("--interval", "0.2", "-p", s.pid)["second_look"]["interval"] == 0.2
    assert report("--no-stop", "-p", s.pid)["second_look"]["moved"] == []


def test_a_running_thread_moves_and_keeps_the_unknown_wait_unknown(scenario):
    # GIVEN a main thread waiting on an Event nothing sets while another thread runs a CPU loop
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "moving_threads.py")])
    waiter, runner = harness.role_tid(s, "waiter"), harness.role_tid(s, "runner")
    doc = report("-p", s.pid)
    threads = {t["tid"]: t for t in doc["threads"]}
    # THEN the runner moved (it used CPU time), the waiter did not
    assert "cpu" in threads[runner]["moved"], threads[runner]["moved"]
    assert threads[waiter]["moved"] == [] and doc["second_look"]["no_progress"] == [waiter]
    # AND the wait stays unknown: the runner might still set the Event (exit 4, no no-progress verdict)
    assert not [v for v in doc["verdicts"] if v["kind"] == "no-progress"]
    assert threads[waiter]["account"]["state"] == "unaccounted" and doc["exit_status"] == 4
    status, text, _ = harness.pyhang_cli("report", "-p", s.pid, look=True)
    assert "Second look after 0.5 s: 1 of 1 blocked thread made no progress; 1 moved (Thread 2 (LWP %d): cpu" % runner \
        in text, text[:2500]


@pytest.mark.parametrize("python", harness.interpreter_params_of())
def test_a_tree_looks_at_every_process_again_at_once_and_a_child_whose_waits_did_not_move_is_a_hang(scenario, python):
    # GIVEN a parent that waits for its child (a known child: accounted for in the tree), and the child the
    # process above: two waits nothing in it can end, every other thread idle (on Debian's 3.11, and on unstable's
    # 3.14 in its root, whose processes are looked at again by the TIDs their reports name)
    parent = "import subprocess, sys; sys.exit(subprocess.call([sys.executable, '-u', %r, %r]))" % (
        os.path.join(harness.SCENARIOS, "idle_threads.py"), IDLERS)
    s = scenario([python, "-c", parent])
    child = s.truth["pid"]
    stuck = sorted(harness.role_tid(s, r) for r in ("main", "joined"))
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid, look=True)
    tree = harness.validated_tree(json.loads(out))
    procs = {p["target"]["pid"]: p for p in tree["processes"] if "target" in p}
    # THEN both processes were looked at again, in one interval, and the child's two waits are a hang
    assert set(procs) == {s.pid, child}
    assert all(p["second_look"] is not None and p["second_look"]["interval"] == 0.5 for p in procs.values())
    look = procs[child]["second_look"]
    assert look["problem"] is None and look["moved"] == [] and set(stuck) <= set(look["no_progress"]), look
    assert [sorted(v["threads"]) for v in procs[child]["verdicts"] if v["kind"] == "no-progress"] == [stuck]
    assert status == tree["exit_status"] == 5, err
    # AND with --once the tree takes one look: the child's waits stay unknown (exit 4)
    status, out, _ = harness.pyhang_cli("report", "--tree", "--once", "--json", "-p", s.pid)
    once = json.loads(out)
    assert status == once["exit_status"] == 4
    assert all(p.get("second_look") is None for p in once["processes"] if "target" in p)


def test_the_options_of_the_second_look_go_with_report_of_a_live_process():
    for argv in (["report", "--once", "core.1"], ["py-bt", "--once", "-p", "1"], ["report", "--interval", "0", "-p", "1"],
                 ["report", "--once", "--interval", "1", "-p", "1"]):
        status, _, err = harness.pyhang_cli(*argv)
        assert status == 2 and ("--once" in err or "--interval" in err), (argv, err)

"""asyncio tasks read from target memory on 3.8 - 3.15 (Debian's stripped
3.11, stripped pyenv copies, and Debian's own 3.13.5, 3.14 and 3.15 in
their root file systems), live and from a core: every task's name, state,
coroutine stack and what it awaits as the scenario recorded them; await
cycles (direct and through gather) as deadlocks of kind "await"; a loop
blocked by time.sleep inside a coroutine; threads waiting on
run_coroutine_threadsafe futures waiting for the loop's thread, which
closes a thread deadlock through a threading.Lock.  One scenario process
per interpreter (testdata/scenarios/asyncio_tasks.py)."""
import os
import re

import pytest

import harness


def interpreters():
    out = []
    for name, path in harness.interpreters():
        minor = int(name.rsplit("-", 1)[1].split(".")[1])  # debian-3.11, pyenv-3.12.1, debian-sid-3.14
        if minor >= 8:
            out.append(pytest.param(path, id=name))
    return out


def tracked(task, c_tasks, python):
    """Whether asyncio still tracks a task the scenario made.  From 3.14,
    _asyncio keeps its own tasks in per-thread lists and unlinks a task from
    its list as soon as it is done (unregister_task, from
    future_schedule_callbacks): a finished C task is then in no list or
    registry of the runtime (its task_node reads NULL), so none can show
    it.  Pure-Python tasks stay in asyncio.tasks._scheduled_tasks, done or
    not."""
    version = tuple(int(x) for x in python.split(".")[:2])
    return not (task["done"] and c_tasks and version >= (3, 14))


def _tasks(loop):
    return {t["name"]: t for t in loop["tasks"]}


@pytest.mark.parametrize("python", interpreters())
def test_asyncio_tasks_awaits_cycles_and_blocked_loops(scenario, python):
    # GIVEN two event loops blocked by synchronous calls, tasks awaiting each other, asyncio
    # primitives, a sleep, an executor job, a failed task and run_coroutine_threadsafe callers
    check_scenario(scenario, python, [])


PURE = [p for p in interpreters() if p.id in ("debian-3.11", "pyenv-3.13.0", "debian-sid-3.14", "debian-sid-3.15")]


@pytest.mark.parametrize("python", PURE)
def test_pure_python_tasks_are_read_through_their_attributes(scenario, python):
    # GIVEN the same program with asyncio's pure-Python Task and Future (no _asyncio)
    check_scenario(scenario, python, ["pure"])


def check_scenario(scenario, python, args):
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "asyncio_tasks.py")] + args, env=env)
    assert s.truth["c_tasks"] == (not args)
    truth, roles = s.truth["tasks"], {t["role"]: t for t in s.truth["threads"]}
    file = os.path.join(harness.SCENARIOS, "asyncio_tasks.py")
    for where, report in (("live", harness.report_json(pid=s.pid)),
                          ("core", harness.report_json(executable=exe, core=s.gcore()))):
        loops = {l["thread"]: l for l in report["asyncio"]}
        # THEN each loop is found with the thread running it
        loop1, loop2 = loops[roles["loop1"]["tid"]], loops[roles["loop2"]["tid"]]
        assert loop1["loop"] == roles["loop1"]["loop"] and loop2["loop"] == s.truth["loop2"]["loop"], where
        tasks = _tasks(loop1)
        addresses = {t["address"] for l in report["asyncio"] for t in l["tasks"]}
        # AND every task with its address, its state and the line its coroutine waits at
        for name, t in truth.items():
            if not tracked(t, s.truth["c_tasks"], s.truth["python"]):
                # (a finished C task of 3.14+, which the runtime forgot, is not made up)
                assert name not in tasks and t["id"] not in addresses, (where, name)
                continue
            got = tasks[name]
            assert got["address"] == t["id"] and got["native"] == s.truth["c_tasks"], (where, name)
            assert got["state"] == ("finished" if t["done"] else "pending"), (where, name, got)
            if "line" in t:
                frame = next(f for f in got["stack"] if f["file"] == file)
                assert frame["line"] == t["line"], (where, name, got["stack"])
        assert [f["line"] for f in tasks["nested"]["stack"] if f["file"] == file] == truth["nested"]["lines"]
        # AND what each awaits
        kinds = {n: (tasks[n]["awaits"] or {}).get("kind") for n in tasks}
        assert kinds["cycle-a"] == kinds["cycle-b"] == kinds["gather-d"] == "task", (where, kinds)
        assert tasks["cycle-a"]["awaits"]["tasks"] == ["cycle-b"] and tasks["gather-d"]["awaits"]["tasks"] == ["gather-c"]
        assert kinds["gather-c"] == "gather" and tasks["gather-c"]["awaits"]["tasks"] == ["gather-d"], where
        assert tasks["gather-c"]["awaits"]["address"] == truth["gather-c"]["waiter"], where
        assert kinds["lock-waiter"] == "lock" and tasks["lock-waiter"]["awaits"]["object"] == truth["lock-waiter"]["object"]
        assert kinds["queue-getter"] == "queue-get" and kinds["lock-holder"] == kinds["nested"] == "event", kinds
        assert kinds["sleeper"] == "sleep" and abs(tasks["sleeper"]["awaits"]["when"] - truth["sleeper"]["when"]) < 1
        # (a sleep whose deadline passed while the loop was blocked: overdue, live)
        assert kinds["overdue"] == "sleep" and abs(tasks["overdue"]["awaits"]["when"] - truth["overdue"]["when"]) < 1
        assert where == "core" or tasks["overdue"]["awaits"]["remaining"] < 0, (where, tasks["overdue"])
        assert kinds["executor-waiter"] == "executor", (where, kinds)
        assert tasks["executor-waiter"]["awaits"]["thread"] == truth["executor-waiter"]["tid"], where
        if tracked(truth["failed"], s.truth["c_tasks"], s.truth["python"]):
            assert tasks["failed"]["exception_type"] == "ValueError" and tasks["failed"]["exception_unretrieved"]
        assert tasks["blocker"]["running"] and loop1["running_task"] == "blocker", where
        # AND the await cycles are deadlocks of kind "await", named by their tasks
        cycles = [sorted(t["name"] for t in d["tasks"]) for d in report["deadlocks"] if d.get("kind") == "await"]
        assert sorted(cycles) == [["cycle-a", "cycle-b"], ["gather-c", "gather-d"]], (where, cycles)
        # AND both loops are called out as blocked inside a task's step
        blocked = {v["threads"][0]: v["text"] for v in report["verdicts"] if v["kind"] == "asyncio-loop-blocked"}
        assert "task 'blocker'" in blocked[roles["loop1"]["tid"]] and roles["loop2"]["tid"] in blocked, where
        assert "line %d, in blocker" % truth["blocker"]["line"] in blocked[roles["loop1"]["tid"]], where
        # (the system call time.sleep blocks in, named)
        threads = {t["tid"]: t for t in report["threads"]}
        call = threads[roles["loop1"]["tid"]]["blocked_on"]["syscall"]["name"]
        assert "waiting in the %s system call" % call in blocked[roles["loop1"]["tid"]], (where, blocked)
        grabber = next(t for t in loop2["tasks"] if t["running"])
        assert grabber["stack"][0]["line"] == s.truth["loop2"]["grabber-line"], where
        # AND a thread waiting on run_coroutine_threadsafe(...).result() waits for the loop's thread
        threads = {t["tid"]: t for t in report["threads"]}
        for caller, loop in (("rcts-sleep-caller", "loop1"), ("rcts-lock-caller", "loop2")):
            b = threads[roles[caller]["tid"]]["blocked_on"]
            assert b["kind"] == "py-future" and b["address"] == roles[caller]["future"], (where, b)
            assert b["owners"] == [roles[loop]["tid"]] and b["owner_source"] == "asyncio-loop", (where, b)
        # AND with the loop's thread waiting on the Lock the caller holds, that is a thread deadlock
        pair = {roles["rcts-lock-caller"]["tid"], roles["loop2"]["tid"]}
        assert any(set(d["threads"]) == pair for d in report["deadlocks"] if not d.get("kind")), where


def test_a_sleep_due_while_its_loop_is_blocked_is_said_overdue_and_why(scenario):
    # GIVEN a task whose asyncio.sleep deadline passed while a synchronous call blocks its loop
    python = next(p for n, p in harness.interpreters() if n == "debian-3.11")
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "asyncio_tasks.py")])
    # WHEN the live process is reported as text
    status, text, err = harness.pyhang_cli("report", "-p", s.pid)
    (line,) = [l for l in text.splitlines() if "task 'overdue'" in l and "sleeps until" in l]
    # THEN the sleep is overdue (never "in -N s"), by how much, and why: the loop is blocked
    assert "(in -" not in text, line
    m = re.search(r"sleeps until loop time ([\d.]+) \(overdue by ([\d.]+) s: its event loop is blocked inside a "
                  r"task's step and runs no timer until that returns\)", line)
    assert m and abs(float(m.group(1)) - s.truth["tasks"]["overdue"]["when"]) < 1e-3 and float(m.group(2)) > 0, line
    # AND the blocked loop's verdict names the call it is blocked in
    assert re.search(r"is blocked inside task 'blocker': .*, waiting in the clock_nanosleep system call;", text), text


@pytest.mark.parametrize("python", [p for p in interpreters() if p.id in ("debian-3.11", "debian-sid-3.14")])
def test_run_coroutine_threadsafe_result_on_the_loops_own_thread_is_a_certain_wait_for_itself(scenario, python):
    # GIVEN a coroutine that hands work to its own loop with run_coroutine_threadsafe and waits on .result()
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "loop_self_wait.py")], env=env)
    loop = harness.role_tid(s, "loop")
    future = s.truth["threads"][0]["future"]
    for where, doc, text in harness.cli_live_and_core_reports(s, exe, text=True):
        # THEN one certain deadlock of that one thread: its edge to itself is the Future only its loop completes
        assert doc["exit_status"] == 3, (where, doc["headline"])
        (d,) = doc["deadlocks"]
        assert d["threads"] == [loop] and d["confidence"] == "certain", (where, d)
        (e,) = d["edges"]
        assert (e["waiter"], e["owner"], e["kind"], e["address"]) == (loop, loop, "py-future", future), (where, e)
        assert e["facts"]["self"] is True and e["facts"]["loop"], (where, e)
        # AND the text says so, and the advice is to await the coroutine instead
        assert "Found one deadlock (certain): a thread waits for itself:" in text, (where, text[:800])
        assert "that loop runs on this very thread, which waits instead of running it" in text, (where, text[:1500])
        assert "await the coroutine itself" in d["advice"], d["advice"]


def test_gdbs_py_tasks_is_the_command_lines(scenario):
    # GIVEN the scenario's loops and tasks, on Debian's 3.11
    s = scenario(["/usr/bin/python3.11", "-u", os.path.join(harness.SCENARIOS, "asyncio_tasks.py")])
    # WHEN gdb's py-tasks and the command line's look at it
    text, out = harness.run_gdb_marked("py-tasks", pid=s.pid)
    status, cli, err = harness.pyhang_cli("py-tasks", "-p", s.pid)
    # THEN they say the same (both word the one analysis), but for the times, which ran on between the looks
    def timeless(t):
        return re.sub(r"\d+(\.\d+)?", "N", t.strip())
    assert status == 0 and "Traceback (most recent call last)" not in out + err, err
    assert "cycle-a" in text and timeless(text) == timeless(cli), (text, cli)

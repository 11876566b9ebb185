"""Python stacks and the GIL, decoded from memory alone, on every interpreter
present: Debian's stripped python3.11 and stripped copies of pyenv's
3.6 - 3.13, live and from a core, with gdb loading no debug info."""
import os

import pytest

import harness

INTERPRETERS = harness.interpreters()
IDS = [name for name, _ in INTERPRETERS]


@pytest.fixture(scope="module", params=INTERPRETERS, ids=IDS)
def python(request):
    name, path = request.param
    exe, env = harness.stripped_interpreter(path)
    return exe, env


def start(scenario, python, script, *args):
    exe, env = python
    return scenario([exe, "-u", os.path.join(harness.SCENARIOS, script)] + [str(a) for a in args], env=env)


def _native_level_running(bt, index):
    """gdb's level of the evaluation-loop frame under which `bt` shows the Python frame `index` (from 0)."""
    level, seen = None, 0
    for line in bt.splitlines():
        if line.startswith("#"):
            level = int(line[1:].split()[0])
        elif "[Python] " in line:
            if seen == index:
                return level
            seen += 1
    raise AssertionError("bt shows only %d Python frames" % seen)


def same_function(got, want):
    # 3.11+ report the qualified name (co_qualname), earlier versions co_name,
    # which is what traceback records.
    return got == want or got.endswith("." + want)


def check_stacks(report, truth):
    threads = {t["tid"]: t for t in report["threads"]}
    for t in truth["threads"]:
        got = threads[t["tid"]]["python_frames"]
        want = t["stack"]
        assert [(f["file"], f["line"]) for f in got] == [(f["file"], f["line"]) for f in want], t["name"]
        for g, w in zip(got, want):
            assert same_function(g["function"], w["function"]), (g, w)


def test_python_frames_equal_what_each_thread_recorded_live_and_from_core(scenario, python):
    # GIVEN threads parked at known recursion depths, each with its own stack recorded
    s = start(scenario, python, "parked_threads.py", 3, 4)
    # WHEN pyhang reports on the live process
    live = harness.report_json(pid=s.pid)
    # THEN every thread's Python frames equal the recorded ones, innermost first
    assert live["target"]["python_version"] == s.truth["python"]
    check_stacks(live, s.truth)
    # AND the same from a core of the same process, opened with the stripped executable
    core = s.gcore()
    from_core = harness.report_json(executable=python[0], core=core)
    assert from_core["target"]["python_version"] == s.truth["python"]
    check_stacks(from_core, s.truth)
    # AND threads parked in time.sleep have released the GIL
    assert {t["gil"] for t in live["threads"]} == {"released"}


def test_py_bt_under_thread_apply_all_prints_every_stack_under_gdbs_header_without_naming_the_thread_again(
        scenario, python):
    s = start(scenario, python, "parked_threads.py", 2, 1)
    text, out = harness.run_gdb_marked("thread apply all pyhang-py-bt", pid=s.pid)
    assert "Traceback" not in out.replace("Traceback (most recent call first):", "")
    lines = text.splitlines()
    # gdb's header "Thread N (Thread 0x… (LWP x) "name"):" (the host's LWP in a container), then pyhang's first
    # line without the thread
    headers = [k for k, line in enumerate(lines) if line.startswith("Thread ") and line.endswith("):")]
    assert [lines[k + 1] for k in headers].count("Python %s, GIL: released" % s.truth["python"]) == \
        len(s.truth["threads"]), text
    assert not [line for line in lines if ", Python %s, GIL: " % s.truth["python"] in line], text
    inner = s.truth["threads"][0]["stack"][0]
    assert 'File "%s", line %d, in ' % (inner["file"], inner["line"]) in text


def test_gil_holder_and_waiters_when_the_holder_blocks_in_native_code(scenario, python):
    # GIVEN a thread that blocks in a C call with the GIL held, and threads that want the GIL
    s = start(scenario, python, "gil_held_in_native.py", 3)
    holder = next(t["tid"] for t in s.truth["threads"] if t["role"] == "holder")
    waiters = sorted(t["tid"] for t in s.truth["threads"] if t["role"] == "waiter")
    # (gil-holder first: a core may be the kernel's, which ends the process)
    text, _ = harness.run_gdb_marked("gil-holder", pid=s.pid)
    for where in ("live", "core"):
        target = {"pid": s.pid} if where == "live" else {"executable": python[0], "core": s.gcore()}
        report = harness.report_json(**target)
        # THEN the holder and every waiter are named, from memory and the futex each sleeps on
        assert report["gil"]["locked"] is True, where
        assert report["gil"]["holder_tid"] == holder, where
        assert report["gil"]["waiters"] == waiters, where
        states = {t["tid"]: t["gil"] for t in report["threads"]}
        assert states[holder] == "holds"
        assert all(states[w] == "waiting" for w in waiters)
    # AND gil-holder calls out the holder blocked in native code in one line
    assert "(LWP %d) holds the GIL while blocked in the pause system call" % holder in text, text


def test_gil_passes_between_spinning_threads(scenario, python):
    # GIVEN four threads spinning in Python and a main thread asleep
    s = start(scenario, python, "gil_contention.py", 4)
    spinners = {t["tid"] for t in s.truth["threads"] if t["role"] == "spinner"}
    sleeper = next(t["tid"] for t in s.truth["threads"] if t["role"] == "sleeper")
    report = harness.report_json(pid=s.pid)
    states = {t["tid"]: t["gil"] for t in report["threads"]}
    # THEN the sleeper has released the GIL, and no thread but a spinner holds or waits for it
    assert states[sleeper] == "released"
    holders = [tid for tid, st in states.items() if st == "holds"]
    assert len(holders) <= 1 and set(holders) <= spinners
    assert set(report["gil"]["waiters"]) <= spinners - set(holders)
    # At any instant most spinners wait: with four, at least one is asleep on the GIL.
    assert report["gil"]["waiters"]


def test_native_unwinding_gives_the_frames_gdb_gives_live_and_from_core(scenario, python):
    # GIVEN threads asleep in time.sleep and threads spinning in the eval loop,
    # each stopped wherever it was (prologues, epilogues, deep in the loop)
    s = start(scenario, python, "gil_contention.py", 3)
    for where in ("live", "core"):
        target = {"pid": s.pid} if where == "live" else {"executable": python[0], "core": s.gcore()}
        # WHEN pyhang reads registers and unwinds 16 frames itself, and gdb unwinds them too
        ours, gdbs = harness.stacks_both_ways(**target)
        # THEN pyhang did it without gdb for every thread
        assert {u for _, u, _, _ in ours} == {"pyhang"}, (where, ours)
        assert {u for _, u, _, _ in gdbs} == {"gdb"}
        # AND frame 0's registers and every pc are the ones gdb finds
        assert [(t, r, pcs) for t, _, r, pcs in ours] == [(t, r, pcs) for t, _, r, pcs in gdbs], where


def test_a_process_without_python_says_so_plainly(scenario):
    s = scenario([harness.fixture_path("prog_parked"), "1"])
    report = harness.report_json(pid=s.pid)
    assert report["target"]["python_version"] is None
    assert {t["gil"] for t in report["threads"]} == {"no-python"}
    text, out = harness.run_gdb_marked("pyhang-py-bt", pid=s.pid)
    assert text.strip() == "this process runs no CPython interpreter pyhang can find"


@pytest.mark.parametrize("interpreter", [p for n, p in harness.interpreters() if n in ("debian-3.11", "debian-sid-3.14")])
def test_a_deep_recursion_reads_as_its_ends_and_a_count_in_the_report_and_py_bt(scenario, interpreter):
    # GIVEN a thread 5,000 frames deep in one function, and one 300 pairs deep in two calling each other
    exe, env = harness.stripped_interpreter(interpreter)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "deep_recursion.py")], env=env)
    main, mutual = (next(t for t in s.truth["threads"] if t["role"] == r) for r in ("main", "mutual"))
    # WHEN the report and py-bt are read as text
    _, text, _ = harness.pyhang_cli("report", "--once", "-p", s.pid)
    _, py_bt, _ = harness.pyhang_cli("py-bt", "-p", s.pid)
    for what, out in (("report", text), ("py-bt", py_bt)):
        # THEN each recursion shows once with how often it repeats, then the frames it was entered from
        assert "[recursion: the frame above {:,} more times]".format(main["repeats"] - 1) in out, (what, out[:3000])
        assert "[recursion: the 2 frames above {:,} more times, {:,} frames]".format(
            mutual["repeats"] - 1, 2 * (mutual["repeats"] - 1)) in out, (what, out[:3000])
        assert "in <module>" in out and "in mutual" in out, what
        # AND the whole of it is short: the 5,600 frames read as a few lines each side of the counts
        assert len(out.splitlines()) < 200, (what, len(out.splitlines()))
    # AND the JSON keeps every frame, and gives the folded form: each recursion's place, period and count
    doc = harness.report_json(pid=s.pid)
    threads = {t["tid"]: t for t in doc["threads"]}
    frames = threads[main["tid"]]["python_frames"]
    assert sum(same_function(f["function"], "descend") for f in frames) == main["repeats"] + 1
    (run,) = threads[main["tid"]]["python_recursion"]
    assert (run["period"], run["repeats"]) == (1, main["repeats"]) and same_function(
        frames[run["start"]]["function"], "descend"), run
    (run,) = threads[mutual["tid"]]["python_recursion"]
    pair = threads[mutual["tid"]]["python_frames"][run["start"]:run["start"] + 2]
    assert (run["period"], run["repeats"]) == (2, mutual["repeats"]), run
    assert sorted(f["function"].split(".")[-1] for f in pair) == mutual["functions"], pair
    assert threads[main["tid"]]["python_frames_omitted"] is None


@pytest.mark.parametrize("interpreter", [p for n, p in harness.interpreters() if n in ("debian-3.11", "pyenv-3.10.13")])
def test_a_stack_deeper_than_pyhang_keeps_shows_both_ends_and_counts_the_middle_in_json_text_and_gdbs_bt(
        scenario, interpreter):
    # GIVEN a thread 12,000 frames deep: past the 10,000 innermost frames pyhang keeps whole
    exe, env = harness.stripped_interpreter(interpreter)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "deep_recursion.py"), "12000"], env=env)
    main = next(t for t in s.truth["threads"] if t["role"] == "main")
    depth = main["repeats"] + 3    # park, descend(0), the recursion's descends, <module>
    # WHEN the JSON report is read
    doc = harness.report_json(pid=s.pid)
    t = next(t for t in doc["threads"] if t["tid"] == main["tid"])
    # THEN its innermost 10,000 frames and outermost 1,000 are kept (the entry: <module>), the middle counted
    frames, omitted = t["python_frames"], t["python_frames_omitted"]
    assert omitted == {"at": 10000, "count": depth - 11000} and len(frames) == 11000, omitted
    assert same_function(frames[0]["function"], "park") and frames[-1]["function"] == "<module>"
    # AND the folded form never runs across the middle
    assert [(r["start"], r["period"]) for r in t["python_recursion"]] == [(2, 1), (10000, 1)], t["python_recursion"]
    # AND the text says how many frames it does not show, where
    _, text, _ = harness.pyhang_cli("report", "--once", "-p", s.pid)
    assert "[{:,} frames not shown between these: the stack is {:,} frames deep; its innermost 10,000 and " \
           "outermost 1,000 are shown]".format(depth - 11000, depth) in text, text[:3000]
    # AND gdb's bt shows the frames kept under the evaluation loops that run them, the middle as one line
    bt, _ = harness.run_gdb_marked("bt", pid=s.pid)
    assert "[Python] park" in bt and "[Python] <module>" in bt, bt[:2000]
    assert bt.count("frames not shown between these") == 1 and "pyhang: this thread's" not in bt
    # (a line that stands for frames is no frame: no argument list after it)
    assert "are shown]\n" in bt and "] ()" not in bt, bt[:2000]
    # AND py-bt-full says the middle where it stands and numbers the outermost frames by their depth, on the
    # command line as in gdb (one function words both)
    _, full, _ = harness.pyhang_cli("py-bt-full", "-p", s.pid)
    (block,) = [b for b in full.strip().split("\n\n") if "(LWP %d)" % main["tid"] in b.splitlines()[0]]
    lines = block.splitlines()
    (at,) = [i for i, line in enumerate(lines) if "frames not shown between these" in line]
    after = next(line for line in lines[at + 1:] if line.startswith("#"))
    assert after.startswith("#%d " % (10000 + depth - 11000)), after
    assert [line for line in lines if line.startswith("#")][-1].startswith("#%d " % (depth - 1)), lines[-3:]
    gdb_full, _ = harness.run_gdb_marked("py-bt-full", pid=s.pid)
    assert gdb_full.strip().splitlines()[1:] == lines[1:], (gdb_full[:500], block[:500])
    if doc["target"]["python_version"].startswith("3.10"):
        # (one evaluation-loop call per frame: each under its own native frame, nothing to fold within one)
        assert bt.count("[Python] ") == 11000
        # AND py-up from the innermost side's last kept frame passes over the middle saying so, to the frame
        # numbered by its depth in the whole stack; py-down goes back the same way
        out = harness.run_gdb(["frame %d" % _native_level_running(bt, 10000 - 1), "echo ==up\\n", "py-up",
                               "echo ==down\\n", "py-down"], pid=s.pid)
        up, down = out.split("==up\n")[1].split("==down\n")
        middle = "[{:,} frames not shown between these".format(depth - 11000)
        assert up.startswith(middle) and up.splitlines()[1].startswith("#%d " % (10000 + depth - 11000)), up
        assert down.startswith(middle) and down.splitlines()[1].startswith("#9999 "), down
    else:
        # (one call runs the whole recursion: folded as py-bt folds it, on each side of the middle)
        assert "[recursion: the frame above {:,} more times]".format(10000 - 3) in bt, bt[:2000]
        assert "[recursion: the frame above {:,} more times]".format(1000 - 2) in bt and bt.count("[Python] ") == 5

"""`pyhang report --json` lists every thread of a live process and of its
core, with TIDs, gdb numbers, names and top native frames, with no debug
info loaded."""
import json
import os
import re
import subprocess

import pytest

import harness

PY = "/usr/bin/python3.11"


def reported_threads(report):
    return {t["tid"]: t for t in report["threads"]}


def check_threads_match_truth(report, truth, names=True):
    threads = reported_threads(report)
    assert set(threads) == {t["tid"] for t in truth["threads"]}
    assert len({t["gdb_num"] for t in report["threads"]}) == len(report["threads"])
    for t in truth["threads"]:
        got = threads[t["tid"]]
        if names:
            assert got["name"] == t["name"]
        frames = got["native_frames"]
        assert frames, "thread %d has no native frames" % t["tid"]
        # Every thread sleeps in libc: frame 0 is in libc, and the exported
        # function it was called through is named from libc's .dynsym alone
        # (the static helpers below it have no symbol without debug info).
        assert os.path.basename(frames[0]["library"]).startswith("libc.so")
        named = [f["function"] for f in frames[:4] if f["library"] and "libc.so" in f["library"]]
        assert any(named), frames[:4]


def check_contract_keys(report):
    assert report["schema"] == "pyhang-report/1"
    assert set(report["target"]) >= {"pid", "core", "executable", "python_version"}
    assert set(report["gil"]) >= {"locked", "holder_tid", "waiters"}
    for key in ("deadlocks", "fork_hazards"):
        assert isinstance(report[key], list)
    for t in report["threads"]:
        assert set(t) >= {"tid", "gdb_num", "name", "gil", "python_frames", "native_frames", "blocked_on"}
        for f in t["native_frames"]:
            assert set(f) >= {"function", "library", "pc"}


@pytest.mark.parametrize("program", ["python", "c"])
def test_report_lists_every_thread_of_a_live_process(scenario, program):
    # GIVEN a process whose threads reported their own TIDs and names
    if program == "python":
        s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "parked_threads.py"), "4", "3"])
    else:
        s = scenario([harness.fixture_path("prog_parked"), "4"])
    # WHEN pyhang reports on it through gdb attached to the live process
    report = harness.report_json(pid=s.pid)
    # THEN the thread list is exactly the one the program reported
    check_contract_keys(report)
    assert report["target"]["pid"] == s.pid
    assert report["target"]["kind"] == "live"
    check_threads_match_truth(report, s.truth)


@pytest.mark.parametrize("program", ["python", "c"])
def test_report_lists_every_thread_of_a_core(scenario, program):
    # GIVEN a core made by gcore of a parked process
    if program == "python":
        s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "parked_threads.py"), "3", "2"])
        exe = PY
    else:
        s = scenario([harness.fixture_path("prog_parked"), "3"])
        exe = harness.fixture_path("prog_parked")
    core = s.gcore()
    # WHEN pyhang reports on the core
    report = harness.report_json(executable=exe, core=core)
    # THEN the same threads, read from the core's notes and memory
    check_contract_keys(report)
    assert report["target"]["kind"] == "core"
    assert report["target"]["core"] == core
    assert report["target"]["pid"] == s.pid
    # Linux cores do not record thread names.
    check_threads_match_truth(report, s.truth, names=False)


def test_text_report_groups_identical_threads_and_names_the_rest(scenario):
    # GIVEN a main thread and four workers parked with identical stacks
    s = scenario([harness.fixture_path("prog_parked"), "4"])
    text, _ = harness.run_gdb_marked("pyhang report", pid=s.pid)
    main = next(t for t in s.truth["threads"] if t["role"] == "main")
    workers = [t for t in s.truth["threads"] if t["role"] == "worker"]
    # THEN the main thread has its own block, the workers share one
    assert '(LWP %d) "%s"' % (main["tid"], main["name"]) in text
    assert "and 3 more threads in the same state with the same stacks" in text
    for w in workers:
        assert "LWP %d" % w["tid"] in text
    assert text.count("native frames:") == 2
    # and the workers, parked on a condition variable nobody signals, are
    # blocked with no owner pyhang can name: said so, never "No deadlock found."
    assert "Found one deadlock" not in text and "No deadlock found." not in text
    assert "Blocked: 4 threads wait on objects whose owner pyhang cannot name; no deadlock among the waits " \
        "whose owners it can name." in text.splitlines()
    assert "Owner unknown: 4 threads blocked, and pyhang names no thread that will end their waits: 4 threads on " \
        "condvar 0x" in text
    assert "(libc.so.6)" in text


def test_reading_through_gdb_gives_the_same_report(scenario):
    # GIVEN a Python process, read once directly and once through gdb's read_memory
    s = scenario(["/usr/bin/python3.11", "-u", os.path.join(harness.SCENARIOS, "parked_threads.py"), "2", "3"])
    direct = harness.report_json(pid=s.pid)
    through_gdb = harness.report_json(pid=s.pid, env={"PYHANG_READER": "gdb"})
    # THEN the callback reader sees the same threads, stacks and symbols
    assert direct["target"]["kind"] == "live" and through_gdb["target"]["kind"] == "callback"
    strip = lambda r: [(t["tid"], t["python_frames"], [f["function"] for f in t["native_frames"]])
                       for t in r["threads"]]
    assert strip(direct) == strip(through_gdb)


def test_threads_whose_code_has_no_cfi_are_unwound_by_gdb_live_and_from_core(scenario):
    # GIVEN a C program whose own functions carry no .eh_frame CFI, every
    # thread asleep in libc below one of them
    exe = harness.fixture_path("prog_parked_nocfi")
    s = scenario([exe, "2"])
    for target in ({"pid": s.pid}, {"executable": exe, "core": s.gcore()}):
        # WHEN pyhang collects the stacks
        ours, gdbs = harness.stacks_both_ways(**target)
        # THEN its unwinder gave up on them (it never guesses) and gdb unwound them
        assert {u for _, u, _, _ in ours} == {"gdb"}, target
        # AND the frames are gdb's, through the function without CFI
        assert [(t, r, pcs) for t, _, r, pcs in ours] == [(t, r, pcs) for t, _, r, pcs in gdbs]
        assert all(len(pcs) >= 2 for _, _, _, pcs in ours), ours  # libc, then the code without CFI
    # AND the report names those functions
    report = harness.report_json(pid=s.pid)
    names = {f["function"] for t in report["threads"] for f in t["native_frames"]}
    assert {"main", "worker"} <= names, names


def test_native_depth_is_a_gdb_setting_with_its_environment_variable_as_fallback(scenario):
    # GIVEN a C program whose workers sleep several native frames deep
    s = scenario([harness.fixture_path("prog_parked"), "2"])
    depth = lambda r: max(len(t["native_frames"]) for t in r["threads"])
    marked = lambda out: json.loads(out.split(harness.BEGIN + "\n", 1)[1].split(harness.END)[0])
    assert depth(harness.report_json(pid=s.pid)) > 2
    # WHEN `set pyhang native-depth 2` comes before the report
    out = harness.run_gdb(["set pyhang native-depth 2", "show pyhang", "echo %s\\n" % harness.BEGIN,
                           "pyhang report --json", "echo %s\\n" % harness.END], pid=s.pid)
    # THEN the report keeps to it
    assert depth(harness.validated_report(marked(out))) == 2
    # AND `show pyhang` lists every setting with its value
    for line in ("Native frames per thread is 2.", "The native stack unwinder pyhang uses is native.",
                 "The target memory reader pyhang uses is auto.", "Python frames in backtraces is on."):
        assert line in out, out
    # AND `help pyhang` names every command, py-tasks among them
    help_text = harness.run_gdb(["help pyhang"])
    assert "py-tasks" in help_text and "set pyhang frame-filter on|off" in help_text, help_text
    # AND PYHANG_NATIVE_DEPTH gives the initial value to scripts that cannot type gdb commands
    assert depth(harness.report_json(pid=s.pid, env={"PYHANG_NATIVE_DEPTH": "1"})) == 1


def _libc_debug_file():
    """libc6-dbg's file for this machine's libc, or None."""
    out = subprocess.run(["readelf", "-n", "/lib/x86_64-linux-gnu/libc.so.6"], stdout=subprocess.PIPE,
                         text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    path = m and "/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2], m.group(1)[2:])
    return path if path and os.path.exists(path) else None


def _gdb_minimal_symbols(pcs, pid=None, executable=None, core=None):
    """gdb's `info symbol` name of each pc (None: no symbol), with gdb's default
    debug-file-directory, so that it loads libc6-dbg's symbols."""
    argv = ["gdb", "-nx", "-batch", "-iex", "set auto-load no"] + ([executable, "-c", core] if core else ["-p", str(pid)])
    out = subprocess.run(argv + sum((["-ex", "info symbol 0x%x" % pc] for pc in pcs), []),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300).stdout
    names = re.findall(r"^(?:(\S+)(?: \+ \d+)? in section|No symbol matches)", out, re.M)
    assert len(names) == len(pcs), out[-3000:]
    return [n or None for n in names]


@pytest.mark.skipif(_libc_debug_file() is None, reason="libc6-dbg is not installed")
def test_libc_static_functions_are_named_from_the_separate_debug_file_as_gdb_names_them(scenario):
    # GIVEN threads blocked in a semaphore wait, whose libc frames are static functions
    # (no .dynsym symbol), and libc6-dbg's debug file for this libc
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py")])
    for where in ("live", "core"):
        target = {"pid": s.pid} if where == "live" else {"executable": PY, "core": s.gcore()}
        # WHEN pyhang reports with gdb's debug-file-directory pointing at it
        text, _ = harness.run_gdb_marked("pyhang report --json", **target)
        with_debug = json.loads(harness.run_gdb(
            ["set debug-file-directory /usr/lib/debug", "echo @@\\n", "pyhang report --json"], **target
        ).split("@@\n", 1)[1].split("\n[Inferior", 1)[0])
        without = json.loads(text[text.index("{"):])
        # (an outer frame's pc is a return address: looked up at pc-1, as gdb does)
        libc = [(f, f["pc"] - (1 if i else 0)) for t in with_debug["threads"]
                for i, f in enumerate(t["native_frames"]) if f["library"] and "libc.so" in f["library"]]
        lookups = sorted({lookup for _, lookup in libc})
        gdb_names = dict(zip(lookups, _gdb_minimal_symbols(lookups, **target)))
        # THEN every libc frame is named as gdb's minimal symbols name it; `??` only
        # where gdb has nothing either
        for f, lookup in libc:
            assert f["function"] == gdb_names[lookup], (where, f)
        # AND some of them are static functions, which libc's own symbols cannot name
        static = {f["pc"] for f, _ in libc if f["function"]} - {
            f["pc"] for t in without["threads"] for f in t["native_frames"] if f["function"]}
        assert static, (where, libc)
        # AND the command line, which tells gdb to load no debug file (their DWARF is slow and
        # pyhang needs only their symbol tables), names them the same
        if where == "live":
            status, out, err = harness.pyhang_cli("report", "--json", "-p", s.pid)
            cli = {f["pc"]: f["function"] for t in json.loads(out)["threads"] for f in t["native_frames"]}
            assert all(cli[f["pc"]] == f["function"] for f, _ in libc), (err, libc)

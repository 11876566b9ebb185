"""A core read where its files have moved, as every core copied off a
production host is: the executable the user gives is used, `--sysroot` and
`--lib-search-path` (gdb's `set sysroot` and `set solib-search-path`) say
where the libraries are now, a file of the same name that is not the one the
core was made from is passed over for the one whose build-id matches, and a
file that cannot be found is named."""
import contextlib
import glob
import json
import os
import shutil
import subprocess
import tempfile

import pytest

import harness

CLI = os.path.join(harness.ROOT, "python", "bin", "pyhang")


def _pyenv_with_libpython(minor):
    for name, path in harness.interpreters():
        if name.startswith("pyenv-3.%d." % minor):
            return path
    return None


@contextlib.contextmanager
def _moved_scenario(argv, make_cores):
    """Runs scenario `argv` (after the interpreter) under a stripped pyenv
    3.12 with a shared libpython, makes its cores with make_cores(scenario,
    tmp), then moves the interpreter tree under a sysroot.  Yields (truth,
    cores, sysroot, the executable's new path, tmp)."""
    python = _pyenv_with_libpython(12)
    if python is None:
        pytest.skip("pyenv 3.12 is not installed")
    tmp = tempfile.mkdtemp(prefix="pyhang-moved-")
    try:
        original = os.path.join(tmp, "host")
        exe, env = harness.stripped_interpreter(python, cache_root=original)
        with harness.Scenario([exe, "-u"] + argv, env=env) as s:
            cores = make_cores(s, tmp)
            truth = s.truth
        sysroot = os.path.join(tmp, "sysroot")
        os.makedirs(os.path.dirname(sysroot + original))
        shutil.move(original, sysroot + original)
        yield truth, cores, sysroot, sysroot + exe, tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def moved():
    """A certain RLock deadlock, its core, then its interpreter tree moved
    under a sysroot.  Yields (truth, core, the executable's new path, tmp)."""
    with _moved_scenario([os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"],
                         lambda s, tmp: shutil.copy(s.gcore(), os.path.join(tmp, "core"))) as m:
        truth, core, _, exe, tmp = m
        yield truth, core, exe, tmp


def _cli(*argv):
    r = subprocess.run([CLI] + list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/tmp",
                       env=dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir()), timeout=300)
    return r.returncode, r.stdout, r.stderr


def _assert_the_scenarios_deadlock(status, out, truth):
    assert status == 3, out
    report = harness.validated_report(json.loads(out))
    assert report["target"]["python_version"] == truth["python"]
    (d,) = report["deadlocks"]
    a = next(t["tid"] for t in truth["threads"] if t["role"] == "holds-a-wants-b")
    b = next(t["tid"] for t in truth["threads"] if t["role"] == "holds-b-wants-a")
    assert d["confidence"] == "certain" and sorted(d["threads"]) == sorted([a, b])
    edges = {(e["waiter"], e["owner"]): e["address"] for e in d["edges"]}
    assert edges == {(a, b): truth["b"], (b, a): truth["a"]}
    return report


def test_moved_core_without_directions_names_the_missing_library_and_claims_no_all_clear(moved):
    truth, core, exe, _ = moved
    status, out, _ = _cli("report", "--json", core, exe)
    report = harness.validated_report(json.loads(out))
    # THEN the executable given is the one read, the library that moved is named,
    # and the report is incomplete (exit 4): a Python process whose state was not read
    assert status == 4 and report["target"]["executable"] == exe
    (incomplete,) = [v for v in report["verdicts"] if v["kind"] == "incomplete"]
    assert incomplete["facts"]["unread"] == "python-state"
    assert incomplete["facts"]["python_evidence"] == "library"
    assert any("libpython3.12" in w and "No such file" in w for w in report["warnings"]), report["warnings"]
    # AND the blocked threads are not covered by an all-clear
    assert not any(t["python_frames"] for t in report["threads"])
    (unknown,) = [v for v in report["verdicts"] if v["kind"] == "owners-unknown"]
    # the verdict's facts say, as data, which thread waits on what: the scenario's two lock takers
    takers = {t["tid"] for t in truth["threads"] if t["role"] != "main"}
    assert {w["tid"] for w in unknown["facts"]["waits"]} == set(unknown["threads"]) == takers, unknown


def test_sysroot_finds_the_moved_files_and_the_deadlock(moved):
    truth, core, exe, tmp = moved
    report = _assert_the_scenarios_deadlock(*_cli("report", "--json", core, exe, "--sysroot",
                                                  os.path.join(tmp, "sysroot"))[:2], truth)
    assert not any("libpython" in w for w in report["warnings"]), report["warnings"]


def test_lib_search_path_prefers_the_file_whose_build_id_the_core_holds(moved):
    truth, core, exe, tmp = moved
    # GIVEN a first search directory with another library under libpython's
    # name, and the right one in the second
    (right,) = glob.glob(os.path.join(os.path.dirname(os.path.dirname(exe)), "lib", "libpython3.12.so.1.0"))
    impostor, flat = os.path.join(tmp, "impostor"), os.path.join(tmp, "flat")
    os.makedirs(impostor, exist_ok=True)
    os.makedirs(flat, exist_ok=True)
    shutil.copy("/lib/x86_64-linux-gnu/libz.so.1", os.path.join(impostor, "libpython3.12.so.1.0"))
    shutil.copy(right, flat)
    # WHEN the core is read with that search path
    report = _assert_the_scenarios_deadlock(*_cli("report", "--json", core, exe, "--lib-search-path",
                                                  impostor + ":" + flat)[:2], truth)
    # THEN the impostor was passed over, silently: nothing it says was used
    assert not any("libpython" in w for w in report["warnings"]), report["warnings"]


def test_sysroot_goes_with_a_core_only():
    status, _, err = _cli("report", "-p", str(os.getpid()), "--sysroot", "/")
    assert status == 2 and "--sysroot goes with a core file" in err


def _parent_and_child_cores(s, tmp):
    (child,) = s.truth["children"]
    harness.wait_processes_parked([child["pid"]])
    return [shutil.copy(s.gcore(), os.path.join(tmp, "core.parent")),
            shutil.copy(harness.gcore(child["pid"], s.tmp), os.path.join(tmp, "core.child"))]


@pytest.fixture(scope="module")
def moved_tree():
    """A parent and its fork child (process_tree.py pipe), one core each,
    then the interpreter tree moved.  Yields (truth, [cores], sysroot)."""
    with _moved_scenario([os.path.join(harness.SCENARIOS, "process_tree.py"), "pipe"],
                         _parent_and_child_cores) as m:
        truth, cores, sysroot, _, _ = m
        yield truth, cores, sysroot


def test_sysroot_reaches_every_core_of_a_tree(moved_tree):
    truth, cores, sysroot = moved_tree
    (child,) = truth["children"]
    # GIVEN one core per process whose interpreter has moved: without directions, neither is Python
    status, out, _ = _cli("report", "--json", *cores)
    doc = harness.validated_tree(json.loads(out))
    assert [p["target"]["python_version"] for p in doc["processes"]] == [None, None]
    # WHEN the sysroot is given once for the tree
    status, out, err = _cli("report", "--json", *cores, "--sysroot", sysroot)
    doc = harness.validated_tree(json.loads(out))
    # THEN every core is read with it: both are the scenario's Python, with their stacks
    got = {p["target"]["pid"]: p for p in doc["processes"]}
    assert set(got) == {truth["pid"], child["pid"]} and got[child["pid"]]["parent_pid"] == truth["pid"]
    for p in got.values():
        assert p["target"]["python_version"] == truth["python"]
        assert not any("libpython" in w for w in p["warnings"]), p["warnings"]
        assert p["threads"][0]["python_frames"]
    main = next(t for t in got[truth["pid"]]["threads"] if t["tid"] == truth["pid"])
    assert main["blocked_on"]["syscall"]["name"] == "wait4"


def test_sysroot_goes_with_core_files_in_tree_mode_too():
    status, _, err = _cli("report", "--tree", "-p", str(os.getpid()), "--sysroot", "/")
    assert status == 2 and "--sysroot goes with core files" in err


def test_a_containers_core_says_to_give_its_root_and_reads_whole_with_it(scenario):
    # GIVEN two threads in an RLock ABBA in a container of Debian unstable (its own
    # python3.14 and glibc 2.43; the host has another libc at the same path), and its core
    python = next((p for n, p in harness.interpreters() if n == "debian-sid-3.14"), None)
    if python is None:
        pytest.skip("no Debian unstable root here (testdata/containers.py)")
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"])
    core = s.gcore()
    # WHEN the core is read on the host as it is
    status, out, _ = harness.pyhang_cli("report", "--json", core)
    report = harness.validated_report(json.loads(out))
    # THEN nothing is claimed: the report is incomplete, and one line says how to read it whole
    assert status == 4, report["verdicts"]
    assert [v["facts"]["unread"] for v in report["verdicts"] if v["kind"] == "incomplete"][0] == "python-state"
    (hint,) = [w for w in report["warnings"] if "pass --sysroot" in w]
    assert "pass --sysroot /proc/PID/root (PID: a process still running in that container) or the container's root" \
        in hint, hint
    # AND the text gives that one line before the thread count, in place of a line for each file not here
    status, text, _ = harness.pyhang_cli("report", core)
    head = text.split("\n3 threads\n", 1)[0].splitlines()
    assert status == 4 and len(head) == 2 and head[1] == "warning: " + hint, head
    # AND what is incomplete is advised the same way, never to name the interpreter nor to install debug symbols
    advice = [l for l in text.splitlines() if l.startswith("  advice: ")]
    assert advice and all("--sysroot, as the warning above says" in l for l in advice), advice
    # AND given the container's root, the deadlock is found, certain, with no such line
    status, out, _ = harness.pyhang_cli("report", "--json", core, *harness.core_options(python))
    report = harness.validated_report(json.loads(out))
    assert status == 3 and report["deadlocks"][0]["confidence"] == "certain", report["deadlocks"]
    assert not [w for w in report["warnings"] if "pass --sysroot" in w], report["warnings"]


@pytest.fixture(scope="module")
def moved_static():
    """A certain RLock deadlock under a copy of Debian's python3.11 (the runtime linked into the
    executable), its core, then the interpreter moved away.  Yields (truth, core, the executable
    the core names, where it is now)."""
    tmp = tempfile.mkdtemp(prefix="pyhang-moved-static-")
    try:
        exe = os.path.join(tmp, "host", "python3.11")
        os.makedirs(os.path.dirname(exe))
        shutil.copy("/usr/bin/python3.11", exe)
        with harness.Scenario([exe, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"]) as s:
            core = shutil.copy(s.gcore(), os.path.join(tmp, "core"))
            truth = s.truth
        moved = os.path.join(tmp, "elsewhere", "python3.11")
        os.makedirs(os.path.dirname(moved))
        shutil.move(exe, moved)
        yield truth, core, exe, moved
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_a_core_whose_interpreter_moved_says_to_give_it_and_reads_whole_given_it(moved_static):
    truth, core, exe, moved = moved_static
    # WHEN the core is read as documented, without the executable, which is no longer where it names
    status, out, _ = _cli("report", "--json", core)
    report = harness.validated_report(json.loads(out))
    # THEN the report says why the executable was not read, and claims nothing (incomplete)
    assert status == 4 and report["target"]["executable"] == exe, report["target"]
    assert "No such file" in report["target"]["executable_problem"], report["target"]
    # AND the text's first line, where it says no Python runtime was found, says what to give
    status, text, _ = _cli("report", core)
    first = text.splitlines()[0]
    assert status == 4 and "no Python runtime found (its executable could not be read here" in first, first
    assert "give the interpreter: pyhang report %s /path/to/python3.X" % core in first, first
    # AND given the interpreter where it is now, the deadlock is found, and nothing is said of it
    report = _assert_the_scenarios_deadlock(*_cli("report", "--json", core, moved)[:2], truth)
    assert report["target"]["executable_problem"] is None, report["target"]
    status, text, _ = _cli("report", core, moved)
    assert "no Python runtime found" not in text and "give the interpreter" not in text, text


def test_the_documented_form_without_the_executable_warns_of_nothing_when_the_core_names_one_here(scenario):
    # GIVEN a parent and its fork child, one core each, made where their files still are
    s = scenario(["/usr/bin/python3.11", "-u", os.path.join(harness.SCENARIOS, "process_tree.py"), "pipe"])
    (child,) = s.truth["children"]
    harness.wait_processes_parked([child["pid"]])
    cores = [s.gcore(), harness.gcore(child["pid"], s.tmp)]
    # WHEN each is read without its executable: one core, a tree of cores, another command
    status, out, err = _cli("report", "--json", cores[0])
    one = harness.validated_report(json.loads(out))
    status, out, err = _cli("report", "--json", *cores)
    tree = harness.validated_tree(json.loads(out))
    status, text, err = _cli("py-bt", cores[0])
    # THEN gdb was given the executable the core names: no warning, and the executable read
    for report in [one] + tree["processes"]:
        assert report["warnings"] == [], report["warnings"]
        assert report["target"]["executable"] == "/usr/bin/python3.11" and report["target"]["executable_problem"] is None
    assert status == 0 and "warning" not in text + err and "Traceback" in text, (text, err)


def test_a_containers_core_read_with_a_running_processs_root_has_every_frames_line_in_gdb_and_the_command_line(
        scenario):
    # GIVEN a deadlock's core made in a container of Debian unstable, the container still running
    python = next((p for n, p in harness.interpreters() if n == "debian-sid-3.14"), None)
    if python is None:
        pytest.skip("no Debian unstable root here (testdata/containers.py)")
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"])
    core = s.gcore()
    root = "/proc/%d/root" % s.pid
    # WHEN it is read with the advice's sysroot, /proc/PID/root, on the command line and in gdb
    status, out, _ = harness.pyhang_cli("report", "--json", core, "--sysroot", root)
    cli_doc = harness.validated_report(json.loads(out))
    r = subprocess.run(["gdb", "-nx", "-batch", "-iex", "set sysroot " + root, "-c", core, "-ex",
                        "source " + harness.GDBEXT, "-ex", "pyhang report --json"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, timeout=300)
    gdb_doc = harness.validated_report(json.loads(r.stdout[r.stdout.index("{"):]))
    # THEN both find the certain deadlock, and every Python frame of the scenario has its line: the program's
    # (bound in from the host) and the standard library's (the container's own)
    assert status == 3 and cli_doc["deadlocks"][0]["confidence"] == "certain"
    for where, doc in (("command line", cli_doc), ("gdb", gdb_doc)):
        frames = [f for t in doc["threads"] for f in t["python_frames"] if f["file"].endswith(".py")]
        assert {f["file"].rsplit("/", 1)[1] for f in frames} >= {"lock_abba.py", "threading.py"}, where
        assert all(f["source"] for f in frames), (where, [f for f in frames if not f["source"]])

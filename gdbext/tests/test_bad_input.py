"""Bad input never hurts the user's session: each problem is one clear line,
the report still prints what it could, and gdb keeps running."""
import glob
import json
import os
import shutil
import signal
import subprocess

import pytest

import harness

PY = "/usr/bin/python3.11"
GDB_ALIVE = "@@GDB-STILL-RUNNING@@"


def parked(scenario, n="2"):
    return scenario([harness.fixture_path("prog_parked"), n])


def assert_no_traceback(out):
    assert "Traceback" not in out
    assert "Python Exception" not in out


def test_core_without_its_executable_still_reports_threads(scenario):
    # GIVEN a core of a program whose executable has since been deleted
    tmp = harness.Scenario([]).tmp
    exe = os.path.join(tmp, "prog_parked_copy")
    shutil.copy(harness.fixture_path("prog_parked"), exe)
    s = scenario([exe, "2"])
    core = s.gcore()
    os.unlink(exe)
    # WHEN gdb opens the core alone
    text, out = harness.run_gdb_marked("pyhang report --json", core=core)
    report = harness.report_json(core=core)
    # THEN one line says the executable is unreadable, and every thread is listed
    assert {t["tid"] for t in report["threads"]} == {t["tid"] for t in s.truth["threads"]}
    assert any(exe in w and "cannot" in w for w in report["warnings"]), report["warnings"]
    assert_no_traceback(out)
    shutil.rmtree(tmp, ignore_errors=True)


def test_core_opened_with_another_executable_is_said_plainly(scenario):
    # GIVEN a core of prog_parked opened with the wrong executable
    s = parked(scenario)
    core = s.gcore()
    report = harness.report_json(executable="/bin/true", core=core)
    # THEN pyhang says which executable the core really ran and reads that one
    assert any("/bin/true" in w and "prog_parked" in w for w in report["warnings"]), report["warnings"]
    assert report["target"]["executable"].endswith("prog_parked")
    assert {t["tid"] for t in report["threads"]} == {t["tid"] for t in s.truth["threads"]}


def test_truncated_core_reports_what_it_can(scenario):
    # GIVEN a core written by the kernel (notes first), cut to half its size
    s = parked(scenario, "3")
    core = s.kernel_core()
    if core is None:
        pytest.skip("this machine pipes cores to a handler (kernel.core_pattern); no kernel core to cut")
    with open(core, "r+b") as f:
        f.truncate(os.path.getsize(core) // 2)
    # WHEN pyhang reports on it
    text, out = harness.run_gdb_marked("pyhang report --json", executable=harness.fixture_path("prog_parked"),
                                       core=core)
    report = harness.report_json(executable=harness.fixture_path("prog_parked"), core=core)
    # THEN the truncation is one warning line and the threads are still listed
    assert any("truncated" in w for w in report["warnings"]), report["warnings"]
    assert {t["tid"] for t in report["threads"]} == {t["tid"] for t in s.truth["threads"]}
    assert_no_traceback(out)


def test_core_that_gdb_refuses_is_one_line(scenario):
    # GIVEN a gcore core (notes last) cut in half: gdb cannot load it at all
    s = parked(scenario)
    core = s.gcore()
    with open(core, "r+b") as f:
        f.truncate(os.path.getsize(core) // 2)
    text, out = harness.run_gdb_marked("pyhang report", executable=harness.fixture_path("prog_parked"), core=core)
    # THEN gdb's own line says it is no core, pyhang's one line why: the cut took its notes
    (said,) = text.strip().splitlines()
    assert said.startswith("pyhang: no core file is loaded: %s is a truncated core: " % core), said
    assert_no_traceback(out)


def test_process_that_exits_during_the_command(scenario):
    # GIVEN gdb attached to a process that is killed before pyhang runs
    s = parked(scenario)
    out = harness.run_gdb(["python import os, signal; os.kill(%d, signal.SIGKILL)" % s.pid,
                           "pyhang report --json", "echo %s\\n" % GDB_ALIVE], pid=s.pid)
    # THEN pyhang says the process is gone, in one line, and gdb goes on
    assert "pyhang: process %d has exited" % s.pid in out
    assert GDB_ALIVE in out
    assert_no_traceback(out)


def test_process_killed_before_pyhang_is_sourced(scenario):
    # GIVEN gdb attached to a process that is killed before `source pyhang.gdb`
    s = parked(scenario)
    out = harness.run_gdb(["python import os, signal; os.kill(%d, signal.SIGKILL)" % s.pid,
                           "source " + harness.GDBEXT, "pyhang report", "echo %s\n" % GDB_ALIVE],
                          pid=s.pid, load=False)
    # THEN sourcing prints no traceback, the report names the dead process, gdb goes on
    assert_no_traceback(out)
    assert "pyhang: process %d has exited" % s.pid in out and GDB_ALIVE in out


# gdb, run by the command line, after it killed the process it is to attach to (-p PID) and that
# process has become a zombie or is gone (as the argument says): a process that exits as gdb attaches.
_KILLING_GDB = """#!/bin/sh
prev=
for a in "$@"; do
  if [ "$prev" = -p ]; then
    kill -9 "$a"
    case %s in
      zombie) until grep -q '^State:.*Z' /proc/$a/status 2>/dev/null; do sleep 0.01; done ;;
      gone) while [ -e /proc/$a ]; do sleep 0.01; done ;;
    esac
  fi
  prev=$a
done
exec %s "$@"
"""


def _killing_gdb(directory, until):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "gdb")
    with open(path, "w") as f:
        f.write(_KILLING_GDB % (until, shutil.which("gdb")))
    os.chmod(path, 0o755)
    return {"PATH": directory + os.pathsep + os.environ["PATH"]}


def _unreaped():
    """(pid, its parent's pid, end) of a process this test starts and does not reap yet."""
    return harness.child_left_unreaped(["sleep", "1000"])


def _reaped():
    """(pid, its parent's pid, end) of a process whose parent reaps it as soon as it exits."""
    return harness.child_reaped_at_exit(["sleep", "1000"])


@pytest.mark.parametrize("command", ["report", "py-bt"])
def test_cli_with_gdb_says_a_process_that_exits_while_gdb_attaches_has_exited_not_to_check_the_pid(tmp_path, command):
    # GIVEN a process killed just before gdb attaches to it: left a zombie (its parent has not
    # reaped it yet), or gone (its parent reaped it at once)
    for start, until in ((_unreaped, "zombie"), (_reaped, "gone")):
        pid, parent, end = start()
        try:
            # WHEN the command line examines it
            status, out, err = harness.pyhang_cli(command, "--gdb", "-p", pid,
                                                  env=_killing_gdb(str(tmp_path / until), until))
        finally:
            end()
        # THEN it exits 1, and its first line says the process exited while gdb attached (and that a
        # zombie holds nothing to read)
        why = ": it is a zombie, which its parent (PID %d) has not reaped" % parent if until == "zombie" else ""
        assert status == 1 and err.splitlines()[0].startswith(
            "pyhang: process %d has exited while gdb was attaching to it%s" % (pid, why)), (until, err)
        # AND gives no hint to check the pid or ptrace permission
        assert "check the pid" not in err and "ptrace_scope" not in err, err


def test_no_target_is_one_line():
    out = harness.run_gdb(["pyhang report", "echo %s\\n" % GDB_ALIVE])
    assert "pyhang: no process or core file is loaded" in out
    assert GDB_ALIVE in out
    assert_no_traceback(out)


def test_a_failing_command_run_for_the_command_line_gives_its_kind_on_a_line_of_its_own():
    # GIVEN a gdb the command line would run (its environment asks for the kinds), with no target
    argv = harness.gdb_command(["pyhang report"])
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                       env=dict(os.environ, PYHANG_FAILURE_KINDS="1"))
    # THEN the failure's kind comes before its one line, which is the same as at the prompt
    lines = [l for l in r.stderr.splitlines() if l.startswith("pyhang")]
    assert lines == ["pyhang-failure: no-target",
                     "pyhang: no process or core file is loaded (use `gdb -p PID` or `gdb EXE CORE`)"], r.stderr
    # AND without it, only the one line
    plain = harness.run_gdb(["pyhang report"])
    assert "pyhang-failure" not in plain and "pyhang: no process or core file is loaded" in plain


def test_unreadable_memory_is_none_not_an_error(scenario):
    s = parked(scenario)
    out = harness.run_gdb([
        "python import _pyhang_native as n; t = n.Target.live(%d); print('READ', t.read(8, 16), t.read(0xffffffffffff0000, 8))" % s.pid,
        "echo %s\\n" % GDB_ALIVE], pid=s.pid)
    assert "READ None None" in out
    assert GDB_ALIVE in out


def test_unknown_arguments_are_one_line(scenario):
    s = parked(scenario)
    text, out = harness.run_gdb_marked("pyhang report --frobnicate", pid=s.pid)
    assert text.strip().startswith("pyhang: pyhang report: unrecognized arguments")
    assert_no_traceback(out)


def _core_layout(core):
    """([(file offset, vaddr, filesz, writable)] of a core's PT_LOADs,
    [(start, end, path)] of its NT_FILE note), read with struct."""
    import struct
    with open(core, "rb") as f:
        data = f.read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, files = [], []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data,
                                                                                  phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_offset, p_vaddr, p_filesz, bool(p_flags & 2)))
        elif p_type == 4:
            pos, end = p_offset, p_offset + p_filesz
            while pos + 12 <= end:
                namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
                desc = pos + 12 + (namesz + 3) // 4 * 4
                if ntype == 0x46494C45:  # NT_FILE
                    count, _ = struct.unpack_from("<QQ", data, desc)
                    ranges = [struct.unpack_from("<QQQ", data, desc + 16 + 24 * k) for k in range(count)]
                    names = data[desc + 16 + 24 * count:desc + descsz].split(b"\0")
                    files = [(a, b, n.decode()) for (a, b, _), n in zip(ranges, names)]
                pos = desc + (descsz + 3) // 4 * 4
    return loads, files


@pytest.mark.parametrize("version", ["debian-3.11", "pyenv-3.12"])
def test_core_cut_inside_the_interpreters_writable_data_never_reads_it_from_the_file(scenario, version):
    # GIVEN a Python program's core written by the kernel (notes first: a
    # gcore core cut short loses its notes and gdb refuses it, see above),
    # cut just inside the first writable segment of the file holding the
    # interpreter (python3.11 is one static file; pyenv's 3.12 keeps it in
    # libpython3.12.so)
    python = next((p for n, p in harness.interpreters() if n.startswith(version)), None)
    if python is None:
        pytest.skip("%s is not installed" % version)
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"], env=env)
    core = s.kernel_core()
    if core is None:
        pytest.skip("this machine pipes cores to a handler (kernel.core_pattern); no kernel core to cut")
    holder = "libpython3.12" if version.startswith("pyenv") else os.path.basename(exe)
    loads, files = _core_layout(core)
    ranges = [(a, b) for a, b, path in files if os.path.basename(path).startswith(holder)]
    cut = next(off for off, vaddr, size, w in loads if w and size and any(a <= vaddr < b for a, b in ranges))
    with open(core, "r+b") as f:
        f.truncate(cut + 16)
    # WHEN pyhang reports on it
    text, out = harness.run_gdb_marked("pyhang report", executable=exe, core=core)
    report = harness.report_json(executable=exe, core=core)
    # THEN it says the core is truncated, still lists the threads, and never
    # states what only the lost bytes could tell (the file's initial data
    # would say the interpreter is still starting, or has no threads)
    assert any("truncated" in w for w in report["warnings"]), report["warnings"]
    assert {t["tid"] for t in report["threads"]} == {t["tid"] for t in s.truth["threads"]}
    assert "starting" not in text and "finaliz" not in text, text
    assert report["verdicts"] and report["verdicts"][0]["kind"] != "no-deadlock", report["verdicts"]
    assert_no_traceback(out)


def test_a_thousand_threads_each_on_its_own_lock_are_never_grouped_under_one_address(scenario):
    # GIVEN 1,000 threads, each blocked on its own threading.Lock
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "own_locks.py"), "1000"], ready_timeout=120)
    waiters = {t["tid"]: t["lock"] for t in s.truth["threads"] if t["role"] == "waiter"}
    report = harness.report_json(pid=s.pid)
    # THEN every thread is listed, each with its own lock
    assert {t["tid"] for t in report["threads"]} == {t["tid"] for t in s.truth["threads"]}
    got = {t["tid"]: (t["blocked_on"] or {}).get("address") for t in report["threads"] if t["tid"] in waiters}
    assert got == waiters
    # AND the text report names every lock: threads are grouped only when their waits are the same
    text, out = harness.run_gdb_marked("pyhang report", pid=s.pid)
    assert all("0x%x" % address in text for address in waiters.values())
    assert "more threads in the same state" not in text
    assert_no_traceback(out)


def test_two_thousand_threads_are_reported_completely(scenario):
    # GIVEN 2,000 Python threads parked 5 frames deep on one Event
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "many_threads.py"), "2000", "5"], ready_timeout=180)
    report = harness.report_json(pid=s.pid)
    # THEN each one is in the report, with its Python stack
    assert len(report["threads"]) == 2001
    workers = {t["tid"] for t in s.truth["threads"] if t["role"] == "worker"}
    assert len(workers) == 2000 and workers <= {t["tid"] for t in report["threads"]}
    assert all(t["python_frames"] for t in report["threads"] if t["tid"] in workers)


@pytest.mark.parametrize("python", harness.interpreters(), ids=[n for n, _ in harness.interpreters()])
def test_damaged_frame_mid_chain_and_unreadable_name_are_one_frame_each_naming_the_bad_address(scenario, python):
    # GIVEN a live process that pointed one frame's code pointer (in the middle of a
    # thread's chain) and one code object's name pointer at an unmapped page
    exe, env = harness.stripped_interpreter(python[1])
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "bad_frames.py")], env=env)
    chain = next(t for t in s.truth["threads"] if t["role"] == "broken-chain")
    named = next(t for t in s.truth["threads"] if t["role"] == "broken-name")
    # THEN the locals of the damaged frame are one problem, the other frames' locals still read
    # (first: a core may be the kernel's, which ends the process)
    text, out = harness.run_gdb_marked("pyhang report --locals --json", pid=s.pid)
    assert_no_traceback(out)
    doc = harness.validated_report(json.loads(text[text.index("{"):]))
    frames = next(t for t in doc["threads"] if t["tid"] == chain["tid"])["python_frames"]
    assert frames[chain["unknown_index"]]["locals_problem"], frames[chain["unknown_index"]]
    assert [v["name"] for v in frames[0]["locals"]] == ["ready"], frames[0]
    for where in ("live", "core"):
        target = {"pid": s.pid} if where == "live" else {"executable": exe, "core": s.gcore()}
        report = harness.report_json(**target)
        threads = {t["tid"]: t for t in report["threads"]}
        # AND the damaged frame is one <unknown> frame in its place, and the older
        # frames are still walked, with their lines
        got = threads[chain["tid"]]["python_frames"]
        assert [f["line"] for f in got] == [f["line"] for f in chain["stack"]], where
        assert [f["file"] for f in got] == [f["file"] for f in chain["stack"]], where
        assert got[chain["unknown_index"]]["function"] == "<unknown>", where
        # AND the thread's problem names the bad code pointer
        assert "code object at 0x%x unreadable" % chain["bad_code"] in threads[chain["tid"]]["problem"], where
        # AND a code object whose name is unreadable keeps its file and line, and the
        # problem names the name's address as well as the code object's
        got = threads[named["tid"]]["python_frames"]
        want = named["stack"][0]
        assert (got[0]["function"], got[0]["file"], got[0]["line"]) == ("<unknown>", want["file"], want["line"]), where
        problem = threads[named["tid"]]["problem"]
        assert "code object at 0x%x: name: str at 0x%x unreadable" % (named["code"], named["bad_name"]) in problem, where
        assert len(got) == len(named["stack"]), where


# ---- never a false all-clear: a Python state pyhang cannot read ----------------------------------

def _first_load_vaddr(path):
    """The page of an ELF file's first PT_LOAD: where its load bias is counted from."""
    import struct
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads = [struct.unpack_from("<IIQQ", data, phoff + i * phentsize) for i in range(phnum)]
    return min(vaddr for p_type, _, _, vaddr in loads if p_type == 1) & ~0xfff


def _runtime_address(pid):
    """(where _PyRuntime is in process `pid`, the file defining it): its value in the .dynsym of
    the mapped file that defines it (nm, not pyhang) plus that file's load bias (/proc/PID/maps)."""
    starts = {}
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5].startswith("/") and int(parts[2], 16) == 0:
                starts.setdefault(parts[5], int(parts[0].split("-")[0], 16))
    for path, start in starts.items():
        out = subprocess.run(["nm", "-D", "--defined-only", path], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
        value = next((int(l.split()[0], 16) for l in out.splitlines() if l.split()[-1:] == ["_PyRuntime"]), None)
        if value is not None:
            return start - _first_load_vaddr(path) + value, path
    raise AssertionError("no mapped file of process %d defines _PyRuntime" % pid)


def _drop_the_pages_holding(core, address):
    """Make the core lack the memory segment holding `address`, as a core cut short lacks what
    lay past the cut: its program header now says its bytes lie past the end of the file.
    Every other segment (the stacks, the heap, glibc's locks) is left as gcore wrote it."""
    import struct
    with open(core, "r+b") as f:
        head = f.read(64)
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        size = os.path.getsize(core)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, _, _, p_vaddr, _, p_filesz, p_memsz, _ = struct.unpack("<IIQQQQQQ", f.read(56))
            if p_type == 1 and p_filesz and p_vaddr <= address < p_vaddr + p_memsz:
                f.seek(phoff + i * phentsize + 8)
                f.write(struct.pack("<Q", size))  # p_offset
                return p_vaddr, p_memsz
    raise AssertionError("no PT_LOAD of %s holds 0x%x" % (core, address))


def _verdicts(report, kind):
    return [v for v in report["verdicts"] if v["kind"] == kind]


@pytest.mark.parametrize("version", ["debian-3.11", "pyenv-3.12"])
def test_a_core_missing_the_python_runtimes_pages_is_an_incomplete_report_with_exit_status_4(scenario, version):
    # GIVEN a certain RLock ABBA deadlock under a real interpreter, and its gcore core
    python = next((p for n, p in harness.interpreters() if n.startswith(version)), None)
    if python is None:
        pytest.skip("%s is not installed" % version)
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"], env=env)
    runtime, holder = _runtime_address(s.pid)
    core = s.gcore()
    takers = sorted(t["tid"] for t in s.truth["threads"] if t["role"] != "main")
    # (the core as gcore wrote it: the deadlock, certain, exit status 3)
    status, out, err = harness.pyhang_cli("report", "--json", core, exe)
    assert status == 3, err
    intact = harness.validated_report(json.loads(out))
    assert sorted(intact["deadlocks"][0]["threads"]) == takers and not _verdicts(intact, "incomplete")
    # WHEN the segment holding the interpreter's runtime state (_PyRuntime) is missing from the core
    _drop_the_pages_holding(core, runtime)
    status, out, err = harness.pyhang_cli("report", "--json", core, exe)
    # THEN the report is made, says the Python state of this Python process could not be read,
    # and exits 4: never 0, never "No deadlock found."
    assert status == 4, (status, err)
    report = harness.validated_report(json.loads(out))
    assert not report["deadlocks"]
    (v,) = _verdicts(report, "incomplete")
    assert report["verdicts"][0] == v
    assert v["facts"]["unread"] == "python-state" and v["facts"]["status"] == "unreadable", v
    assert v["facts"]["version"] == s.truth["python"], v
    assert v["facts"]["python_evidence"] == "runtime" and v["facts"]["python_evidence_path"] == holder, v
    # AND what still holds is said: every thread and its native stack, and the takers' lock waits
    every = sorted(t["tid"] for t in s.truth["threads"])
    assert sorted(v["threads"]) == every and sorted(v["facts"]["read"]["native_stacks"]) == every, v
    assert set(takers) <= set(v["facts"]["read"]["lock_waits"]), v
    assert any("truncated" in w for w in report["warnings"]), report["warnings"]
    # AND the text's answer comes first: the report is incomplete, and why
    status, text, _ = harness.pyhang_cli("report", core, exe)
    lines = text.splitlines()
    assert status == 4 and not any(l.startswith("No deadlock found") for l in lines), text
    assert "Report incomplete: the Python state could not be read; no deadlock can be ruled out." in lines, text
    assert lines.index("Report incomplete: the Python state could not be read; no deadlock can be ruled out.") < \
        min(i for i, l in enumerate(lines) if l.startswith("Report incomplete: the Python state of this"))
    assert "could not be read from the target's memory" in text and "still read: the native stacks of 3 threads" in text


def test_a_c_program_read_whole_is_never_said_to_have_an_unreadable_python_state(scenario):
    # GIVEN a C program with parked threads: no Python runtime, and none needed
    s = parked(scenario)
    status, out, err = harness.pyhang_cli("report", "--json", "-p", s.pid)
    report = harness.validated_report(json.loads(out))
    # THEN no incomplete verdict: what pyhang needs of a C program it read, and it says no more; its exit
    # status (2) says that pyhang's question does not apply, never that all is well
    assert status == 2 and not _verdicts(report, "incomplete"), (status, report["verdicts"], err)
    status, text, _ = harness.pyhang_cli("report", "-p", s.pid)
    lines = text.splitlines()
    assert status == 2 and lines[0].endswith("no Python runtime found"), text
    assert lines[3].startswith("Blocked: 2 threads wait") and "incomplete" not in text, text
    assert "Python state" not in text, text


# Python 2: a real CPython pyhang has no layout for (and never will), two threads in an RLock ABBA.
_PYTHON2_ABBA = r'''
import ctypes, json, os, sys, threading, time
gettid = lambda: ctypes.CDLL(None).syscall(186)
lock_a, lock_b = threading.RLock(), threading.RLock()
held, tids = [threading.Event(), threading.Event()], {}
def take(first, second, mine, other, role):
    with first:
        tids[role] = gettid()
        held[mine].set()
        held[other].wait()
        with second:
            pass
for args in ((lock_a, lock_b, 0, 1, "holds-a-wants-b"), (lock_b, lock_a, 1, 0, "holds-b-wants-a")):
    t = threading.Thread(target=take, args=args)
    t.daemon = True
    t.start()
for e in held:
    e.wait()
threads = [{"tid": tid, "role": role} for role, tid in sorted(tids.items())] + [{"tid": gettid(), "role": "main"}]
with open(os.environ["PYHANG_TRUTH"], "w") as f:
    json.dump({"python": "%d.%d.%d" % sys.version_info[:3], "threads": threads}, f)
sys.stdout.write("READY\n")
sys.stdout.flush()
while True:
    time.sleep(3600)
'''


def test_a_python_pyhang_has_no_layout_for_is_an_incomplete_report_with_exit_status_4_live_and_from_a_core(
        scenario, tmp_path):
    # GIVEN pyenv's Python 2.7 (CPython, libpython2.7.so) with two threads in an RLock ABBA
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    python2 = next(iter(sorted(glob.glob(os.path.join(root, "versions", "2.7.*", "bin", "python2.7")))), None)
    if python2 is None:
        pytest.skip("pyenv's Python 2.7 is not installed")
    program = tmp_path / "abba2.py"
    program.write_text(_PYTHON2_ABBA)
    s = scenario([python2, "-u", str(program)])
    takers = sorted(t["tid"] for t in s.truth["threads"] if t["role"] != "main")
    for target in (("-p", s.pid), (s.gcore(), python2)):
        # WHEN pyhang reports on it
        status, out, err = harness.pyhang_cli("report", "--json", *target)
        # THEN the report says the Python state of this Python process could not be read, exit status 4
        assert status == 4, (target, status, err)
        report = harness.validated_report(json.loads(out))
        (v,) = _verdicts(report, "incomplete")
        assert v["facts"]["unread"] == "python-state" and v["facts"]["status"] == "unsupported", v
        assert v["facts"]["python_evidence"] == "runtime", v
        assert os.path.basename(v["facts"]["python_evidence_path"]).startswith("libpython2.7"), v
        # AND what still holds: every native stack, glibc's locks, the takers' semaphore waits (owners unknown)
        assert sorted(v["facts"]["read"]["native_stacks"]) == sorted(t["tid"] for t in s.truth["threads"]), v
        assert v["facts"]["read"]["lock_layouts"] is True and set(takers) <= set(v["facts"]["read"]["lock_waits"])
        assert sorted(_verdicts(report, "owners-unknown")[0]["threads"]) == takers, report["verdicts"]
        status, text, _ = harness.pyhang_cli("report", *target)
        assert status == 4 and not any(l.startswith("No deadlock found") for l in text.splitlines()), text
        assert "Report incomplete: the Python state could not be read; no deadlock can be ruled out." in text
        assert "a Python runtime of unknown version" in text.splitlines()[0], text
    # AND as the root of a process tree: the tree says so for that process, and exits 4 too
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    assert status == 4, (status, err)
    tree = harness.validated_tree(json.loads(out))
    assert [v["facts"]["unread"] for v in _verdicts(tree["processes"][0], "incomplete")] == ["python-state"]
    status, text, _ = harness.pyhang_cli("report", "--tree", "-p", s.pid)
    assert status == 4 and "No deadlock found across processes." not in text, text
    assert ("Report incomplete: in PID %d the Python state could not be read; no deadlock across processes can be "
            "ruled out." % s.pid) in text.splitlines(), text


# ---- a core that lost thread stacks -------------------------------------------------------------

def test_a_gcore_core_that_lost_thread_stacks_says_which_threads_and_why(scenario):
    # GIVEN threads parked on glibc 2.43, whose thread stacks start with a guard page,
    # and a core as gdb's gcore writes it (it cannot read those stacks: zeros)
    python = next((p for n, p in harness.interpreters() if n == "debian-sid-3.14"), None)
    if python is None:
        pytest.skip("no Debian unstable root here (testdata/containers.py)")
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "parked_threads.py"), 2, 1])
    core = harness.gcore(s.pid, s.tmp, complete=False)
    report = harness.report_json(executable=python, core=core)
    # THEN one warning names the threads whose stacks are lost, and why
    (lost,) = [w for w in report["warnings"] if "only zeros at the stack pointer" in w]
    workers = [t["tid"] for t in s.truth["threads"] if t["tid"] != s.pid]
    assert all(str(t) in lost for t in workers) and str(s.pid) not in lost, lost
    assert "guard page" in lost and "glibc 2.42" in lost, lost
    # AND the same process through a completed core has its stacks and no such warning
    report = harness.report_json(executable=python, core=harness.gcore(s.pid, s.tmp))
    assert not [w for w in report["warnings"] if "only zeros" in w], report["warnings"]

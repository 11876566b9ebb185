"""Bad input never hurts the user's session: each problem is one clear line,
the report still prints what it could, and gdb keeps running."""
import os
import shutil
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
    # THEN gdb's own line says why, pyhang's one line says there is nothing to read
    assert text.strip().splitlines() == ["pyhang: no process or core file is loaded (use `gdb -p PID` or `gdb EXE CORE`)"]
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


def test_no_target_is_one_line():
    out = harness.run_gdb(["pyhang report", "echo %s\\n" % GDB_ALIVE])
    assert "pyhang: no process or core file is loaded" in out
    assert GDB_ALIVE in out
    assert_no_traceback(out)


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

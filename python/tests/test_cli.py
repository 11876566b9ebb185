"""The `pyhang` command line runs gdb for the user and prints only pyhang's answer."""
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

CLI = os.path.join(ROOT, "python", "bin", "pyhang")


def test_cli_report_json_on_a_live_process_and_a_core():
    with harness.Scenario([harness.fixture_path("prog_parked"), "2"]) as s:
        out = subprocess.run([CLI, "report", "--json", "-p", str(s.pid)], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir())).stdout
        report = harness.validated_report(json.loads(out))
        assert {t["tid"] for t in report["threads"]} == {t["tid"] for t in s.truth["threads"]}
        core = s.gcore()
        out = subprocess.run([CLI, "report", "--json", core], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir())).stdout
        assert harness.validated_report(json.loads(out))["target"]["core"] == core


def test_cli_refuses_both_or_neither_target():
    r = subprocess.run([CLI, "report"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode != 0 and "give either -p PID or a core file" in r.stderr


def test_bare_pyhang_says_in_its_short_usage_how_to_name_a_process_or_a_core():
    # GIVEN pyhang run with no argument at all
    r = subprocess.run([CLI], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # THEN a usage error whose first lines show -p PID and a core, and the commands, not argparse's list of
    # missing arguments
    assert r.returncode == 2 and r.stdout == "", r
    first = r.stderr.splitlines()[:4]
    assert first[0].startswith("usage: pyhang COMMAND -p PID"), first
    assert "pyhang COMMAND CORE [EXECUTABLE]" in first[1] and "report, py-bt" in first[3], first
    assert "required" not in r.stderr


def test_pretty_without_json_is_refused_not_silently_ignored():
    for argv in (["report", "--pretty", "-p", "1"], ["job", "--local", "--pretty"]):
        r = subprocess.run([CLI] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert r.returncode == 2 and "--pretty goes with --json" in r.stderr, (argv, r.stderr)


def cli(*argv, user=None, build=None, command=CLI):
    """(exit status, stdout, stderr) of the command line."""
    env = dict(os.environ, PYHANG_BUILD_DIR=build or harness.build_dir())
    if command != CLI:  # an installation finds its own module
        env.pop("PYHANG_BUILD_DIR")
    cmd = [command] + [str(a) for a in argv]
    if user:
        cmd = ["su", user, "-s", "/bin/sh", "-c", " ".join(cmd)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd="/tmp")
    return r.returncode, r.stdout, r.stderr


def error_document(out):
    doc = json.loads(out)
    assert doc["schema"] == "pyhang-error/1" and doc["error"]["message"], doc
    return doc["error"]


def test_cli_exits_3_when_the_report_finds_a_deadlock_and_2_for_a_c_program_without_one(scenario):
    s = scenario([harness.fixture_path("prog_abba")])
    status, out, _ = cli("report", "--json", "-p", s.pid)
    assert status == 3 and len(harness.validated_report(json.loads(out))["deadlocks"]) == 1
    status, out, _ = cli("report", "-p", s.pid)
    assert status == 3 and out.startswith("pyhang report: live process %d" % s.pid)
    parked = scenario([harness.fixture_path("prog_parked"), "1"])
    assert cli("report", "-p", parked.pid)[0] == 2   # no Python: pyhang's answer does not apply
    status, out, _ = cli("fork-hazards", "-p", parked.pid)
    assert status == 0 and out.startswith("fork-hazards: live process %d" % parked.pid)


def test_cli_for_a_pid_that_does_not_exist_fails_saying_so_and_with_gdb_gives_gdbs_reason_too():
    status, out, err = cli("report", "-p", 999999)
    assert status == 1 and out == ""
    assert err.splitlines()[0] == "pyhang: there is no process 999999" and "gdb" not in err
    status, out, err = cli("report", "--json", "-p", 999999)
    e = error_document(out)
    assert status == 1 and e["gdb"] == [] and "999999" in e["hint"]
    status, out, err = cli("report", "--gdb", "-p", 999999)
    assert status == 1 and out == ""
    assert err.splitlines()[0] == "pyhang: there is no process 999999" and "gdb: ptrace: No such process." in err
    status, out, err = cli("report", "--gdb", "--json", "-p", 999999)
    e = error_document(out)
    assert status == 1 and e["gdb"] == ["ptrace: No such process."] and "999999" in e["hint"]


def test_cli_without_ptrace_permission_says_what_to_do(scenario):
    # GIVEN a root process, and pyhang installed where a user who may not trace it can run it
    # (the checkout itself may be private to root)
    s = scenario([harness.fixture_path("prog_parked"), "1"])
    prefix = tempfile.mkdtemp(prefix="pyhang-cli-", dir="/tmp")
    try:
        os.chmod(prefix, 0o755)
        subprocess.run(["cmake", "--install", harness.build_dir(), "--prefix", prefix], check=True,
                       stdout=subprocess.DEVNULL)
        status, out, err = cli("report", "--json", "-p", s.pid, user="nobody",
                               command=os.path.join(prefix, "bin", "pyhang"))
        by_gdb = cli("report", "--json", "--gdb", "-p", s.pid, user="nobody", command=os.path.join(prefix, "bin", "pyhang"))
    finally:
        shutil.rmtree(prefix, ignore_errors=True)
    # THEN pyhang's own stop says whose process it is, and what to do
    e = error_document(out)
    assert status == 1 and e["gdb"] == [] and e["message"].startswith("this user, nobody (uid ")
    assert e["message"].endswith("may not read process %d: it runs as root (uid 0)" % s.pid)
    assert "ptrace_scope" in e["hint"] and "SYS_PTRACE" in e["hint"] and "ptrace_scope" in err
    # AND gdb's stop gives gdb's own reason with the same advice
    e = error_document(by_gdb[1])
    assert by_gdb[0] == 1 and "Operation not permitted" in " ".join(e["gdb"])
    assert "ptrace_scope" in e["hint"] and "SYS_PTRACE" in e["hint"]


def test_cli_on_a_file_that_is_not_a_core_fails_plainly(tmp_path):
    bogus = tmp_path / "not-a-core"
    bogus.write_text("garbage")
    status, out, err = cli("report", "--json", bogus)
    e = error_document(out)
    assert status == 1 and "is not a core" in " ".join(e["gdb"])
    assert e["message"] == "%s is not a core file: it has no ELF header" % bogus and err.startswith("pyhang: " + e["message"])


def test_cli_names_why_a_core_cannot_be_read_missing_truncated_or_not_a_core(scenario, tmp_path):
    # GIVEN a path with no file, a core cut short, and an ELF file that is no core
    s = scenario([harness.fixture_path("prog_parked"), "1"])
    whole = s.gcore()
    cut, head = tmp_path / "cut.core", tmp_path / "head.core"
    with open(whole, "rb") as f:
        cut.write_bytes(f.read(os.path.getsize(whole) // 2))
    subprocess.run("head -c 1000000 %s > %s" % (whole, head), shell=True, check=True)
    for path, want in ((tmp_path / "missing.core", "%s does not exist" % (tmp_path / "missing.core")),
                       (cut, "%s is a truncated core: %d bytes of the " % (cut, os.path.getsize(cut))),
                       (head, "%s is a truncated core: 1000000 bytes of the " % head),
                       (harness.fixture_path("prog_parked"), "is a shared object or PIE executable, not a core file")):
        status, out, err = cli("report", "--json", path)
        # THEN each says its own cause, in the error document and on stderr's first line
        e = error_document(out)
        assert status == 1 and want in e["message"] and want in err.splitlines()[0], (path, e, err)
    # AND the truncated core's size is set against what its own program headers describe
    described = int(re.search(r"bytes of the (\d+) its headers describe", cli("report", "--json", cut)[2]).group(1))
    assert os.path.getsize(cut) < described <= os.path.getsize(whole)


def test_cli_without_a_built_pyhang_says_how_to_build_it(scenario, tmp_path):
    s = scenario([harness.fixture_path("prog_parked"), "1"])
    status, out, err = cli("report", "--json", "-p", s.pid, build=tmp_path)
    e = error_document(out)
    assert status == 1 and "not built" in e["message"] and "cmake --build %s" % tmp_path in e["message"]
    assert "Traceback" not in err


def test_cli_version_and_options_that_go_with_report_only():
    status, out, _ = cli("--version")
    assert status == 0 and out.startswith("pyhang ") and "pyhang-report/1" in out
    status, _, err = cli("lock-owner", "--json", "-p", 1)
    assert status == 2 and "--json goes with `report` only" in err


def test_a_mistyped_command_gets_the_nearest_one_suggested_and_usage_status():
    status, _, err = cli("reprot", "-p", 1)
    assert status == 2 and "unknown command 'reprot'; did you mean 'report'?" in err


def test_the_python_frame_commands_and_py_tasks_run_from_the_command_line(scenario):
    # GIVEN two threads deadlocked on RLocks, each holding its locks in locals
    s = scenario(["/usr/bin/python3.11", "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"])
    a = next(t["tid"] for t in s.truth["threads"] if t["role"] == "holds-a-wants-b")
    # THEN py-locals shows every thread's innermost frame's locals
    status, out, _ = cli("py-locals", "-p", s.pid)
    assert status == 0
    assert "owned by LWP %d (count 1)" % a in out and "name = 'holds-a'" in out, out
    # AND py-bt-full the arguments of each frame
    status, out, _ = cli("py-bt-full", "-p", s.pid)
    assert status == 0 and "in take (first=<threading.RLock at 0x%x" % s.truth["a"] in out, out
    # AND py-tasks says plainly there is no asyncio task, rather than nothing
    status, out, _ = cli("py-tasks", "-p", s.pid)
    assert status == 0 and out.startswith("no asyncio task or event loop in this process"), out


def test_every_command_has_its_own_help_with_examples():
    for name in ("report", "py-bt", "py-bt-full", "py-locals", "py-tasks", "gil-holder", "lock-owner",
                 "fork-hazards"):
        status, out, _ = cli(name, "--help")
        assert status == 0 and out.startswith("usage: pyhang %s " % name), out
        assert "examples:" in out and "pyhang %s " % name in out.split("examples:")[1]
    assert "--sysroot DIR" in cli("report", "--help")[1]

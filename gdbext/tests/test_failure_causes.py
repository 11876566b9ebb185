"""Each way a live process cannot be read is named by its real cause on
the command line's first line of stderr, with exit status 1: it exited
while it was read without stopping it, it belongs to another user, it
simply exited before pyhang looked.  Each is made to happen with real
processes."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import harness

PY = "/usr/bin/python3.11"
SLEEPER = "import time\nprint('READY', flush=True)\ntime.sleep(1000)\n"

# Runs the command line in this Python with the target killed at the moment pyhang, reading it without
# stopping it, has opened it and starts on its interpreter: argv[1] the pid, argv[2] "zombie" (wait until it
# is one) or "gone" (until its parent reaped it), the rest pyhang's arguments.
_KILLED_WHILE_READ = r"""
import os, signal, sys, time
sys.path[:0] = [os.path.join(sys.argv[1], "python"), os.path.join(os.environ["PYHANG_BUILD_DIR"], "python")]
pid, until, argv = int(sys.argv[2]), sys.argv[3], sys.argv[4:]
from pyhang import cli, nostop
read_python = nostop.ProcThreads.python

def killed_first(self, facts):
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            state = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
        except OSError:
            state = None
        if (until == "zombie" and state == "Z") or (until == "gone" and state is None):
            break
        time.sleep(0.01)
    return read_python(self, facts)

nostop.ProcThreads.python = killed_first
sys.exit(cli.main(argv))
"""


def _python_child(reap):
    """(pid, parent, end) of a sleeping Python process whose parent reaps it at once (`reap`), or not: the
    test's own child, left a zombie until the test ends it."""
    start = harness.child_reaped_at_exit if reap else harness.child_left_unreaped
    return start([PY, "-c", SLEEPER], ready=True)


@pytest.mark.parametrize("until", ["zombie", "gone"])
def test_a_python_process_killed_while_read_without_stopping_it_has_exited_never_runs_no_python(until):
    # GIVEN a Python process killed once `pyhang report --no-stop` has opened it, before it reads its interpreter
    pid, parent, end = _python_child(reap=until == "gone")
    try:
        r = subprocess.run([sys.executable, "-S", "-c", _KILLED_WHILE_READ, harness.ROOT, str(pid), until, "report",
                            "--no-stop", "-p", str(pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=300, env=dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir()))
    finally:
        end()
    # THEN it exits 1 and its first line says the process exited while it was read (a zombie: whose parent has
    # not reaped it); no report, no word of a static binary or of no Python
    first = r.stderr.splitlines()[0] if r.stderr else ""
    why = ": it is a zombie, which its parent (PID %d) has not reaped" % parent if until == "zombie" else ""
    assert r.returncode == 1 and first.startswith(
        "pyhang: process %d has exited while pyhang read it without stopping it%s" % (pid, why)), (r.stderr, r.stdout)
    assert r.stdout == "" and "musl" not in r.stderr and "no Python" not in r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to run pyhang as another user")
@pytest.mark.parametrize("mode", [["report", "--once"], ["report", "--no-stop"], ["py-bt"], ["report", "--tree"]],
                         ids=["report", "no-stop", "py-bt", "tree"])
def test_another_users_process_is_said_to_be_that_users_with_what_permission_it_takes(scenario, mode):
    # GIVEN a Python process of root's
    s = scenario([PY, "-c", SLEEPER])
    # WHEN user nobody asks pyhang about it
    argv = [os.path.join(harness.ROOT, "python", "bin", "pyhang")] + mode + ["-p", str(s.pid)]
    if subprocess.run(["su", "nobody", "-s", "/bin/sh", "-c", "test -x " + argv[0]]).returncode != 0:
        pytest.skip("user nobody cannot reach this checkout (%s): clone it where every user can read it"
                    % harness.ROOT)
    r = subprocess.run(["su", "nobody", "-s", "/bin/sh", "-c", " ".join(argv)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300,
                       env=dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir()))
    # THEN it exits non-zero and says whose the process is and whose pyhang is, and what permission it takes;
    # never that the process is gone
    if mode[-1] == "--tree":   # a tree is made of what could be read: its process says so
        assert r.returncode != 0 and "may not read process %d" % s.pid in r.stdout + r.stderr, (r.stdout, r.stderr)
        return
    first = r.stderr.splitlines()[0] if r.stderr else ""
    assert r.returncode == 1 and first == \
        "pyhang: this user, nobody (uid 65534), may not read process %d: it runs as root (uid 0)" % s.pid, r.stderr
    assert "ptrace permission" in r.stderr and "gone" not in r.stderr and "no process" not in r.stderr


@pytest.mark.parametrize("flags", [["--once"], ["--no-stop"]], ids=["gdb", "no-stop"])
def test_a_process_that_exited_is_no_process_and_no_container_is_suggested(flags):
    # GIVEN a Python process that ran and exited (reaped) before pyhang looked
    p = subprocess.Popen([PY, "-c", "print('READY', flush=True)"], stdout=subprocess.PIPE, text=True)
    p.communicate()
    status, out, err = harness.pyhang_cli("report", "-p", p.pid, *flags)
    # THEN it exits 1: no process has that pid now, it has exited or the pid is wrong; no container is named
    lines = err.splitlines()
    assert status == 1 and lines[0] == "pyhang: there is no process %d" % p.pid, err
    assert "no process has pid %d now: it has exited, or the pid is wrong" % p.pid in err
    assert "container" not in err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, for a PID namespace of its own")
def test_a_pid_a_container_gives_names_the_process_this_machine_sees_by_it():
    # GIVEN a process in a PID namespace of its own whose pid inside it is one no process has here
    inner = 40000 + os.getpid() % 20000
    while os.path.exists("/proc/%d" % inner):
        inner += 1
    p = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
                          "echo %d > /proc/sys/kernel/ns_last_pid; sleep 1000 & echo $!; wait" % (inner - 1)],
                         stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert int(p.stdout.readline()) == inner
        host = None
        deadline = time.monotonic() + 30
        while host is None and time.monotonic() < deadline:
            host = next((int(d) for d in os.listdir("/proc") if d.isdigit() and _inner_pid(int(d)) == inner), None)
        # WHEN pyhang is given the pid the container sees
        status, out, err = harness.pyhang_cli("report", "-p", inner, "--once")
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    # THEN it says there is no such process here, and which process this machine sees by that pid
    assert status == 1 and err.splitlines()[0] == "pyhang: there is no process %d" % inner, err
    assert "PID %d is process %d of its PID namespace (a container)" % (host, inner) in err, err
    assert "pyhang report -p %d" % host in err


def _inner_pid(pid):
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("NSpid:"):
                ids = [int(x) for x in line.split()[1:]]
                return ids[-1] if len(ids) > 1 else None
    except (OSError, ValueError):
        return None
    return None


def _cut(path, fraction=0.5):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(int(size * fraction))
    return size


@pytest.mark.parametrize("writer", ["pyhang-gcore", "kernel"])
def test_a_core_cut_in_half_that_keeps_its_notes_is_reported_with_what_it_lost(scenario, tmp_path, writer):
    # GIVEN a deadlock's core written by `pyhang gcore` (notes first, as the kernel's) or by the kernel, cut in half
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"])
    if writer == "kernel":
        core = s.kernel_core()
        if core is None:
            pytest.skip("this machine pipes cores to a handler (kernel.core_pattern); no kernel core to cut")
    else:
        core = str(tmp_path / "core")
        status, out, err = harness.pyhang_cli("gcore", "-p", s.pid, "-o", core)
        assert status == 0, err
    _cut(core)
    # WHEN the command line reports on it
    status, out, err = harness.pyhang_cli("report", "--json", core, PY)
    # THEN it is a report, not a failure: every thread the scenario had, and one warning of how much was lost
    assert status != 1, err
    report = harness.validated_report(json.loads(out))
    assert {t["tid"] for t in report["threads"]} == {t["tid"] for t in s.truth["threads"]}
    (cut,) = [w for w in report["warnings"] if "is truncated" in w]
    assert "core file %s is truncated" % core in cut and "unknown" in cut, cut
    assert report["exit_status"] != 0 or report["deadlocks"], report["verdicts"]   # never an all-clear of half a core


def test_a_gdb_gcore_core_cut_short_says_its_notes_were_lost_in_one_line(scenario):
    # GIVEN a core gdb's gcore wrote (memory first, notes last), cut in half
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"])
    core = s.gcore()
    size = _cut(core)
    # WHEN the command line reports on it
    status, out, err = harness.pyhang_cli("report", core, PY)
    # THEN it exits 1, and its first line says by how much it was cut and that the cut took every thread
    first = err.splitlines()[0]
    assert status == 1 and first.startswith("pyhang: %s is a truncated core: %d bytes of the " % (core, size // 2)), err
    assert "the cut took its notes, which gdb's gcore writes last" in first and "pyhang gcore" in first, first
    # AND pyhang's commands in a gdb started on it (which refused the core) say the same, after "no core file
    # is loaded", where they said no process or core was given
    for command in ("pyhang report", "py-bt", "lock-owner"):
        text, out = harness.run_gdb_marked(command, core=core, executable=PY)
        said = text.strip().splitlines()
        assert len(said) == 1 and said[0].startswith("pyhang: no core file is loaded: %s is a truncated core: %d bytes "
                                                     % (core, size // 2)), (command, out[-2000:])
        assert "the cut took its notes" in said[0], (command, said)


def test_a_statically_linked_program_is_said_to_be_one_live_without_stopping_and_from_its_core(scenario):
    # GIVEN a C program linked statically (gcc -static): threads parked on a condvar, no libc.so mapped
    exe = harness.fixture_path("prog_parked_static")
    s = scenario([exe, "2"])
    said = "locks: %s is linked statically (no libc.so is mapped)" % exe
    for where, target in (("gdb", ["-p", s.pid, "--once"]), ("no-stop", ["--no-stop", "-p", s.pid, "--once"]),
                          ("core", [s.gcore(), exe])):
        status, out, err = harness.pyhang_cli("report", "--json", *target)
        report = harness.validated_report(json.loads(out))
        # THEN every thread is read, the one warning says the program is static (never "static binary or musl?"),
        # and no deadlock is ruled out on layouts pyhang does not know
        assert {t["tid"] for t in report["threads"]} == {t["tid"] for t in s.truth["threads"]}, where
        assert [w for w in report["warnings"] if w.startswith(said)], (where, report["warnings"])
        assert status == 4 and "musl" not in out, (where, status)


def test_a_program_on_musls_libc_is_said_to_be_one_live_without_stopping_and_from_its_core(scenario):
    # GIVEN a C program built with musl-gcc (Debian's musl, whose libc is /usr/lib/x86_64-linux-musl/libc.so)
    exe = harness.fixture_path("prog_parked_musl")
    assert os.path.exists(exe), "%s was not built: musl-tools is missing (testdata/setup.sh --tests)" % exe
    s = scenario([exe, "2"])
    for where, target in (("gdb", ["-p", s.pid, "--once"]), ("no-stop", ["--no-stop", "-p", s.pid, "--once"]),
                          ("core", [s.gcore(), exe])):
        status, out, err = harness.pyhang_cli("report", "--json", *target)
        report = harness.validated_report(json.loads(out))
        # THEN every thread is read, and the one warning says the libc is musl's, not a glibc of no version
        assert {t["tid"] for t in report["threads"]} == {t["tid"] for t in s.truth["threads"]}, where
        said = [w for w in report["warnings"] if "the target's libc is musl (" in w]
        assert len(said) == 1 and "x86_64-linux-musl/libc.so" in said[0], (where, report["warnings"])
        assert not [w for w in report["warnings"] if "no glibc version found" in w], (where, report["warnings"])
        assert status == 4, (where, status)

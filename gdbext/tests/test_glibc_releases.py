"""glibc releases newer than the host's, as containers run them: prog_locks
(every glibc lock kind held by a known thread and waited on by another)
runs inside Debian's trixie root (glibc 2.41) and sid root (the newest
glibc, 2.43 when written), keeping its pid, and pyhang names each waiter's
lock and owner live and from a gcore core opened with the root as sysroot,
against the truth the fixture prints.  glibc 2.41 moved the condition
variable's fields (no more __g_refs): its waiters sleep on __g_signals at
+32, which the truth shows and the report must follow.

The roots are made by testdata/containers.py (mmdebstrap, once per machine);
without them the tests are skipped."""
import ast
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

import containers
import harness

LIBC = "usr/lib/x86_64-linux-gnu/libc.so.6"
GLIBC_PROBE = ("python from pyhang_gdb import decoders; from pyhang.model.record import to_data; "
               "r = decoders.lock_reader(); print('GLIBC', repr((to_data(r.glibc), to_data(r.problem))))")
# Locks whose owner glibc does not record (or that have none).
UNOWNED = ("semaphore", "condvar", "futex", "rwlock-read-held")


def root_params():
    return [pytest.param(name, id="debian-" + name) for name, _, _, _ in containers.ROOTS]


def banner_version(root):
    """The release libc's own banner names ("release version 2.41."), read on the host."""
    with open(os.path.join(root, LIBC), "rb") as f:
        m = re.search(rb"GNU C Library [^\n\0]*release version (2\.\d+)", f.read())
    assert m, "no glibc banner in %s" % os.path.join(root, LIBC)
    return m.group(1).decode()


def unresolved(launch_ldd, path):
    """The lines of ldd inside the root that say a library is not found."""
    r = subprocess.run([launch_ldd, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    return [l.strip() for l in r.stdout.splitlines() if "not found" in l] or ([] if r.returncode == 0 else [r.stdout])


@pytest.fixture(params=root_params())
def inside(request):
    """(root, launcher of prog_locks inside it, the directory of its copy).
    The fixture is copied to /tmp, which the launcher binds into the root at
    the same path (the build directory need not be inside the checkout)."""
    root = containers.root_path(request.param)
    if not os.path.exists(os.path.join(root, ".pyhang-root")):
        pytest.skip("no %s root in %s (python3 testdata/containers.py makes it)"
                    % (request.param, containers.cache_dir()))
    if os.geteuid() != 0:
        pytest.skip("entering a root needs unshare --mount and pivot_root, as root")
    if not os.path.exists(harness.fixture_path("prog_locks")):
        pytest.skip("prog_locks is not built in %s" % harness.build_dir())
    work = tempfile.mkdtemp(prefix="pyhang-glibc-%s-" % request.param, dir="/tmp")
    launch = None
    try:
        for name in ("prog_locks", "liblockfixture.so"):
            shutil.copy2(harness.fixture_path(name), os.path.join(work, name))
        ldd = containers.launcher(root, "/usr/bin/ldd")
        missing = [l for n in ("prog_locks", "liblockfixture.so") for l in unresolved(ldd, os.path.join(work, n))]
        if missing:
            pytest.skip("the host-built fixture does not run in the %s root: %s" % (request.param, "; ".join(missing)))
        launch = containers.launcher(root, os.path.join(work, "prog_locks"))
        yield root, launch, work
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if launch:  # a launcher of this run's own copy: no later run uses it
            os.unlink(launch)


def check_blocked_on(report, records):
    """Every waiter's lock, its address and its owner as the truth says."""
    threads = {t["tid"]: t for t in report["threads"]}
    for r in records:
        b = threads[r["waiter"]]["blocked_on"]
        assert b is not None, r
        assert (b["kind"], b["address"]) == (harness.expected_lock_kind(r), r["address"]), (r, b)
        assert b["library"].endswith("liblockfixture.so"), b
        if r["lock"] in UNOWNED:
            assert b["owners"] == [], (r, b)
        else:
            assert (b["owners"], b["owner_source"]) == (r["holders"], "lock-word"), (r, b)


def glibc_seen(argv):
    """(LockReader.glibc, LockReader.problem) in a gdb started with `argv`."""
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300).stdout
    line = next((l for l in out.splitlines() if l.startswith("GLIBC ")), None)
    assert line, "no GLIBC line in gdb's output:\n" + out[-3000:]
    return ast.literal_eval(line[len("GLIBC "):])


def check_glibc(seen, root):
    glibc, problem = seen
    assert problem is None, problem   # LockReader.problem: a LayoutsIssue (its data here) when the layouts are refused
    assert glibc is not None
    assert (glibc["version"], glibc["source"], glibc["exact"]) == (banner_version(root), "__nptl_version", True)
    assert glibc["layouts"] == "glibc 2.41+", glibc


def core_argv(commands, core, exe, root, work):
    """gdb on a core of the container: its files under the root (sysroot),
    the fixture's copy where the host has it (solib-search-path)."""
    argv = harness.gdb_command(commands, core=core, executable=exe)
    return argv[:1] + ["-iex", "set sysroot " + root, "-iex", "set solib-search-path " + work] + argv[1:]


def test_the_root_runs_its_own_glibc_and_a_condvar_waiter_sleeps_at_plus_32(scenario, inside):
    # GIVEN prog_locks inside the root
    root, launch, _ = inside
    s = scenario([launch])
    # THEN the truth shows the 2.41+ condvar: waiters sleep on __g_signals[g], +32 or +36
    cond = next(r for r in s.truth["records"] if r["lock"] == "condvar")
    assert cond["futex"] - cond["address"] in (32, 36), cond
    # AND pyhang reads the root's glibc from the root's libc, with the layouts made for it
    check_glibc(glibc_seen(harness.gdb_command([GLIBC_PROBE], pid=s.pid)), root)


def test_every_lock_owner_inside_the_root_live_and_from_core(scenario, inside):
    # GIVEN each glibc lock kind held by a known thread and waited on by another, inside the root
    root, launch, work = inside
    s = scenario([launch])
    records = s.truth["records"]
    assert len(records) >= 11
    # WHEN pyhang reports on the live process
    check_blocked_on(harness.report_json(pid=s.pid), records)
    # AND on its core, opened with the root as sysroot (gdb's and the command line's --sysroot)
    core = s.gcore()
    exe = os.path.join(work, "prog_locks")
    check_glibc(glibc_seen(core_argv([GLIBC_PROBE], core, exe, root, work)), root)
    status, out, err = harness.pyhang_cli("report", "--json", core, exe, "--sysroot", root, "--lib-search-path", work)
    # Not 4 (incomplete: glibc's lock layouts not known), not 1 (no report).  Whether a
    # likely deadlock is found (3) is the driver-lock heuristics', not glibc's, affair (a C
    # program with no deadlock: 2, it runs no Python).
    assert status in (0, 2, 3), (status, err[-3000:])
    report = harness.validated_report(json.loads(out))
    assert not [v for v in report["verdicts"] if v["kind"] == "incomplete"], report["verdicts"]
    check_blocked_on(report, records)

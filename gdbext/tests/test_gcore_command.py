"""`pyhang gcore -p PID` makes a core that keeps what gdb's gcore loses: the
thread stacks glibc 2.42+ starts with a guard page, and what /proc knows of
the process that a core cannot hold (the fd table with each pipe's and
socket's other end, file locks, each thread's system call, the children),
kept in a note of the core.  A report of such a core gives the live
report's accounts and verdicts; a record that is damaged, of another
version or of another core is one warning, and the core reads as one
without it.  A core's answers on Debian's 3.11 and on unstable's 3.14 in
its root (its cores read with the root as the sysroot)."""
import json
import os
import shutil
import sys

import pytest

import harness

sys.path[0:0] = [os.path.join(harness.build_dir(), "python"), os.path.join(harness.ROOT, "python")]
from pyhang import core_notes, proc_record  # noqa: E402

PY = "/usr/bin/python3.11"


@pytest.fixture(scope="module")
def debian():
    """One syscall_waits.py process (threads on a pipe, a poll, a socketpair, a flock held by the child,
    a wait4 for the child, which reads a pipe only the parent can write) for the tests."""
    s = harness.python_scenario(PY, "syscall_waits.py").start()
    yield s
    s.stop()


SID = dict(harness.interpreters()).get("debian-sid-3.14")


@pytest.fixture(scope="module")
def sid():
    """The same under Debian unstable's 3.14 in its root."""
    s = harness.python_scenario(SID, "syscall_waits.py").start()
    yield s
    s.stop()


def started():
    """(the module fixture of a syscall_waits.py process, its interpreter) on Debian's 3.11 and unstable's 3.14."""
    return [pytest.param("debian", PY, id="debian-3.11")] + \
        ([pytest.param("sid", SID, id="debian-sid-3.14")] if SID else [])


def pyhang_gcore(*args):
    """The lines `pyhang gcore ARGS` printed; it must succeed."""
    status, out, err = harness.pyhang_cli("gcore", *args)
    assert status == 0 and "Traceback" not in err, (status, out, err)
    return out.splitlines()


def report(*target):
    """(exit status, the pyhang-report/1 document, stderr) of `pyhang report --json TARGET`."""
    status, out, err = harness.pyhang_cli("report", "--json", *target)
    assert "Traceback" not in err, err
    doc = harness.validated_report(json.loads(out))
    assert doc["exit_status"] == status, err
    return status, doc, err


def accounts(doc):
    return {t["tid"]: t["account"] for t in doc["threads"]}


def verdicts(doc):
    return sorted((v["kind"], sorted(v["threads"])) for v in doc["verdicts"])


def by_role(doc, truth):
    threads = {t["tid"]: t for t in doc["threads"]}
    return {t["role"]: threads[t["tid"]] for t in truth["threads"]}


def recorded_cores(s, where):
    """{"recorded": `pyhang gcore`'s core of the parent, "child": `pyhang gcore`'s core of the child}."""
    out = {"recorded": str(where / "parent.core"), "child": str(where / "child.core")}
    pyhang_gcore("-p", s.pid, "-o", out["recorded"])
    pyhang_gcore("-p", s.truth["child"], "-o", out["child"])
    return out


@pytest.fixture(scope="module")
def cores(debian, tmp_path_factory):
    """recorded_cores() of the Debian process, and "plain": the parent's core without the record."""
    where = tmp_path_factory.mktemp("cores")
    out = recorded_cores(debian, where)
    out["plain"] = harness.gcore(debian.pid, str(where))
    return out


@pytest.fixture(scope="module")
def sid_cores(sid, tmp_path_factory):
    return recorded_cores(sid, tmp_path_factory.mktemp("sid-cores"))


@pytest.mark.parametrize("which, python", started())
def test_a_pyhang_gcore_core_gives_the_live_reports_accounts_and_verdicts(request, which, python):
    s, cores = request.getfixturevalue(which), request.getfixturevalue("cores" if which == "debian" else "sid_cores")
    # GIVEN the live report, whose pipe, socket and flock waits /proc explains
    status, live, _ = report("-p", s.pid)
    # WHEN the core pyhang gcore made is reported by the command line, and by gdb's `pyhang report`
    core_status, core, _ = report(*harness.core_options(python), cores["recorded"], python)
    in_gdb = harness.report_json(executable=python, core=cores["recorded"])
    # THEN every thread has the live report's account, and the verdicts are the live ones
    assert accounts(core) == accounts(live) and accounts(in_gdb) == accounts(live)
    assert verdicts(core) == verdicts(live) and verdicts(in_gdb) == verdicts(live)
    assert core_status == status == 4
    # AND the waits /proc explains are explained from the core: the flock by the child holding it, the
    # pipe read by the process that holds its other end (itself), the wait4 by the child
    roles = by_role(core, s.truth)
    assert roles["locker"]["account"] == {"state": "elsewhere", "reason": "file-lock", "finding": "unaccounted",
                                          "threads": [], "pids": [s.truth["child"]]}
    assert roles["reader"]["account"]["reason"] == "own-process"
    assert roles["main"]["account"]["reason"] == "child"
    live_roles = by_role(live, s.truth)
    for role in ("reader", "receiver", "locker"):
        sc = roles[role]["blocked_on"]["syscall"]
        assert sc["fd_table"] and sc["object"]["link"] == live_roles[role]["blocked_on"]["syscall"]["object"]["link"]
        assert roles[role]["blocked_on"]["detail"] == live_roles[role]["blocked_on"]["detail"], role
        assert roles[role]["name"] == role   # the thread's name, which a core does not keep, from the record
    # AND the report says what the core's record holds
    recorded = core["target"]["proc_record"]
    assert recorded["schema"] == proc_record.SCHEMA and recorded["threads"] == len(core["threads"])
    assert [c["pid"] for c in recorded["children"]] == [s.truth["child"]] and recorded["environment"] == {}
    assert live["target"].get("proc_record") is None


def test_a_core_without_the_record_reads_as_before(debian, cores):
    status, doc, _ = report(cores["plain"], PY)
    roles = by_role(doc, debian.truth)
    assert {role: roles[role]["account"]["reason"] for role in ("reader", "receiver", "locker")} == \
        dict.fromkeys(("reader", "receiver", "locker"), "no-fd-table")
    assert doc["target"].get("proc_record") is None and status == 4


def copied(cores, which, tmp_path):
    return shutil.copy(cores[which], str(tmp_path / ("%s.core" % which)))


def damaged(cores, tmp_path):
    """The parent's recorded core with bytes inside its record's JSON overwritten."""
    path = copied(cores, "recorded", tmp_path)
    desc, _, offset = proc_record.raw(path)
    with open(path, "r+b") as f:
        f.seek(offset)
        at = f.read().index(desc) + len(desc) // 2
        f.seek(offset + at)
        f.write(b"\xff\xfe{{")
    return path


def other_version(cores, tmp_path):
    """The parent's core without a record, given one of a later pyhang's schema."""
    path = copied(cores, "plain", tmp_path)
    future = {"schema": "pyhang-proc/99", "pyhang_version": "99.0", "pid": 1, "fd_tables": {}}
    core_notes.add_note(path, proc_record.NOTE_NAME, proc_record.NT_PYHANG_PROC, json.dumps(future).encode())
    return path


def foreign(cores, tmp_path):
    """The parent's core without a record, given the child's core's record."""
    path = copied(cores, "plain", tmp_path)
    core_notes.add_note(path, proc_record.NOTE_NAME, proc_record.NT_PYHANG_PROC, proc_record.raw(cores["child"])[0])
    return path


@pytest.mark.parametrize("make, words", [
    (damaged, "the record of /proc that pyhang gcore kept in core file %(core)s is damaged (not JSON ("),
    (other_version, "the record of /proc in core file %(core)s is pyhang-proc/99 (written by pyhang 99.0), which "
                    "this pyhang does not read (it reads pyhang-proc/1)"),
    (foreign, "the record of /proc in core file %(core)s was recorded of process %(child)d, but the core is of "
              "process %(pid)d"),
], ids=["damaged", "other-version", "other-core"])
def test_a_record_that_cannot_be_used_is_one_warning_and_the_core_reads_as_one_without_it(debian, cores, tmp_path,
                                                                                          make, words):
    s = debian
    _, plain, _ = report(cores["plain"], PY)
    path = make(cores, tmp_path)
    # WHEN the core with a record that cannot be used is reported, by the command line and in gdb
    status, doc, err = report(path, PY)
    text_status, text, _ = harness.pyhang_cli("report", path, PY)
    in_gdb = harness.report_json(executable=PY, core=path)
    # THEN one warning says what is wrong with the record, in the JSON, the text and gdb's report
    said = words % {"core": path, "child": s.truth["child"], "pid": s.pid}
    for got in (doc, in_gdb):
        assert [w for w in got["warnings"] if "record of /proc" in w] == \
            [w for w in got["warnings"] if w.startswith(said)], got["warnings"]
        assert len([w for w in got["warnings"] if w.startswith(said)]) == 1, got["warnings"]
    assert text.count("record of /proc") == 1 and ("warning: " + said) in text and "Traceback" not in text
    # AND the rest of the report is the report of the core without a record
    assert accounts(doc) == accounts(plain) and verdicts(doc) == verdicts(plain) and accounts(in_gdb) == accounts(plain)
    assert doc["target"].get("proc_record") is None and status == text_status == plain["exit_status"]


def test_gcore_tree_writes_one_core_per_process_whose_reports_give_the_live_trees_answer(debian, tmp_path):
    # (on 3.14 in its root the trees of pyhang gcore --tree's cores are those of test_file_locks, test_pipe_knot,
    # test_server_died, test_pool_lost_task and test_process_tree)
    s, python = debian, PY
    child = s.truth["child"]
    # WHEN pyhang gcore --tree makes the cores of the parent and its child
    lines = pyhang_gcore("--tree", "-p", s.pid, "-o", str(tmp_path / "core"))
    paths = [str(tmp_path / ("core.%d" % pid)) for pid in (s.pid, child)]
    # THEN each process has its core, with its own record, each said in one line
    assert [l.split(" written to ")[1].split(";")[0] for l in lines] == paths, lines
    assert lines[0].startswith("pyhang: core of process %d written to " % s.pid)
    for path, pid in zip(paths, (s.pid, child)):
        assert proc_record.read(path, pid)[0].pid == pid
    # AND the cores together give the live tree's answer, pipes followed: the same deadlock (likely: the
    # parent's sleeping threads could still write the pipe its child reads), the same sleepers named, the same
    # threads not accounted for
    status, out, _ = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    live = harness.validated_tree(json.loads(out))
    status_cores, out, err = harness.pyhang_cli("report", "--json", *harness.core_options(python), *paths)
    tree = harness.validated_tree(json.loads(out))
    def knots(doc):
        return [(d["processes"], sorted(d["threads"]), d["confidence"],
                 sorted((z["tid"], z["call"]) for z in d["sleepers"])) for d in doc["deadlocks"]]
    assert knots(tree) == knots(live) and [k[2] for k in knots(live)] == ["likely"], knots(live)
    assert tree["unaccounted"] == live["unaccounted"], (tree["unaccounted"], live)
    assert tree["unfollowed"] == [] and status_cores == status == 3, err


def test_gcore_of_a_process_that_is_not_there_fails_in_one_line():
    status, out, err = harness.pyhang_cli("gcore", "-p", 999999)
    assert status == 1 and err.splitlines()[0] == "pyhang: there is no process 999999" and not out


def in_write(pid):
    """(its /proc/PID/syscall line, the bytes it has written so far: /proc/PID/io wchar)."""
    with open("/proc/%d/syscall" % pid) as f, open("/proc/%d/io" % pid) as io:
        return f.read().split(), int(next(l for l in io if l.startswith("wchar:")).split()[1])


def test_gcore_does_not_stop_a_process_whose_write_a_stop_would_cut_short(scenario, tmp_path):
    # GIVEN the subprocess pipe hang: the child blocked writing its stderr pipe, the parent reading stdout
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "pipe_stderr.py")], env={"PYTHONUNBUFFERED": "1"})
    child = s.truth["child"]
    harness.wait_processes_parked([child], calls={child: 1})
    before = in_write(child)
    # WHEN a core of the child, then of the tree, is asked for
    status, out, err = harness.pyhang_cli("gcore", "-p", child, "-o", str(tmp_path / "child"))
    # THEN the child gets none, and the line says why and how to make one anyway
    assert status == 1 and not out and not os.path.exists(str(tmp_path / "child")), (out, err)
    assert err.startswith("pyhang: no core of process %d: LWP %d is inside write on fd 2 (pipe:[" % (child, child))
    assert err.rstrip().endswith("(--stop makes the core anyway)"), err
    status, out, err = harness.pyhang_cli("gcore", "--tree", "-p", s.pid, "-o", str(tmp_path / "core"))
    # AND in the tree only the parent, which reads, is stopped for its core
    assert status == 1 and os.path.exists(str(tmp_path / ("core.%d" % s.pid))), err
    assert not os.path.exists(str(tmp_path / ("core.%d" % child))) and "no core of process %d" % child in err
    # AND the child's write is as it was, not a byte more or less
    assert in_write(child) == before


def sid_314():
    return [pytest.param(p, id=n) for n, p in harness.interpreters() if n.startswith("debian-sid-3.14")]


@pytest.mark.parametrize("python", sid_314())
def test_a_gcore_core_of_glibc_243_threads_keeps_every_thread_stack(scenario, python, tmp_path):
    # GIVEN threads parked on glibc 2.43, whose thread stacks start with a guard page gdb's gcore cannot read
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "parked_threads.py"), 2, 1])
    path = str(tmp_path / "core")
    pyhang_gcore("-p", s.pid, "-o", path)
    # WHEN its pyhang gcore core is reported (with the root it ran in as the sysroot)
    _, doc, _ = report(*harness.core_options(python), path, python)
    # THEN no stack is lost, and every thread's Python frames are the ones it recorded where it sleeps
    assert not [w for w in doc["warnings"] if "only zeros" in w], doc["warnings"]
    threads = {t["tid"]: t for t in doc["threads"]}
    for t in s.truth["threads"]:
        got = threads[t["tid"]]
        assert [(f["file"], f["line"]) for f in got["python_frames"]] == \
            [(f["file"], f["line"]) for f in t["stack"]], t["name"]
        # AND its native stack is walked from the sleep up into the interpreter, which zeros cannot give
        inside = [f for f in got["native_frames"][1:] if os.path.basename(f["library"] or "").startswith("python3")]
        assert len(inside) >= 2, got["native_frames"]
        if t["role"] == "worker":
            assert got["name"] == t["name"]   # the name a core does not keep, from the record
    assert doc["target"]["proc_record"]["threads"] == len(s.truth["threads"])

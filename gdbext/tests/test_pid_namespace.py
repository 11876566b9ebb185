"""A target in another PID and mount namespace, as in a container, examined
from the host: its files are read through /proc/PID/root (its interpreter
lives on a tmpfs only its namespace sees), its TIDs are the ones the program
itself records (the host's are kept as host_tid), and the report says both
pid numbers; live, and from a gcore core made on the host."""
import json
import os
import shutil
import subprocess
import time

import pytest

import harness

# Inside the namespaces: a private tmpfs holding a copy of the interpreter,
# which the host cannot see at that path.
_INSIDE = """mount --make-rprivate / && mkdir -p /opt/ctr && mount -t tmpfs tmpfs /opt/ctr &&
cp /usr/bin/python3.11 /opt/ctr/python3 && exec /opt/ctr/python3 -u "$0" RLock"""


def _nspid(path):
    with open(path) as f:
        return next([int(x) for x in l.split()[1:]] for l in f if l.startswith("NSpid:"))


class InNamespaces(harness.Scenario):
    """lock_abba.py under `unshare --pid --mount`: `pid` is the host's pid of
    the Python process, the truth's TIDs are its namespace's."""

    def __init__(self):
        super().__init__(["unshare", "--pid", "--mount", "--fork", "--kill-child", "--mount-proc", "sh", "-c",
                          _INSIDE, os.path.join(harness.SCENARIOS, "lock_abba.py")])
        self._python = None

    @property
    def pid(self):
        if self._python is None:
            with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
                self._python = int(f.read().split()[0])
        return self._python

    def host_tids(self):
        """{the namespace's TID: the host's} of every thread."""
        out = {}
        for name in os.listdir("/proc/%d/task" % self.pid):
            ids = _nspid("/proc/%d/task/%s/status" % (self.pid, name))
            out[ids[-1]] = ids[0]
        return out

    def wait_parked(self, deadline):
        """Every thread the program reported is asleep, found by its host TID."""
        host = self.host_tids()
        while time.monotonic() < deadline:
            if all(harness.thread_state(self.pid, host[t["tid"]]) in ("S", "D") for t in self.truth["threads"]):
                time.sleep(self.settle)
                return
            time.sleep(0.05)
        raise harness.ScenarioError("threads did not park")


@pytest.fixture(scope="module")
def contained():
    if not os.path.exists("/usr/bin/python3.11") or shutil.which("unshare") is None:
        pytest.skip("needs Debian's python3.11 and unshare")
    probe = subprocess.run(["unshare", "--pid", "--mount", "--fork", "true"], stderr=subprocess.PIPE, text=True)
    if probe.returncode != 0:
        pytest.skip("cannot make PID and mount namespaces here: %s" % probe.stderr.strip())
    s = InNamespaces().start()
    try:
        # its executable, copied out while it exists: a core's reader gives it after the core
        exe = os.path.join(s.tmp, "python3-from-the-container")
        shutil.copy("/proc/%d/root/opt/ctr/python3" % s.pid, exe)
        yield s, exe
    finally:
        s.stop()


def _assert_namespaced_deadlock(report, s):
    truth = s.truth
    host = s.host_tids()
    assert report["target"]["pid"] == s.pid and report["target"]["namespace_pid"] == truth["pid"] == 1
    assert report["target"]["python_version"] == truth["python"]
    # every thread once, by the TID the program recorded, with the host's beside it
    assert sorted((t["tid"], t["host_tid"]) for t in report["threads"]) == sorted(host.items())
    names = {t["tid"]: t["python_name"] for t in report["threads"]}
    assert all(names[t["tid"]] for t in truth["threads"] if t["role"] != "main"), names
    a = next(t["tid"] for t in truth["threads"] if t["role"] == "holds-a-wants-b")
    b = next(t["tid"] for t in truth["threads"] if t["role"] == "holds-b-wants-a")
    (d,) = report["deadlocks"]
    assert d["confidence"] == "certain"
    assert {(e["waiter"], e["owner"]): e["address"] for e in d["edges"]} == {(a, b): truth["b"], (b, a): truth["a"]}


def test_live_process_in_a_container_reads_its_files_through_its_root_and_speaks_its_tids(contained):
    s, _ = contained
    report = harness.report_json(pid=s.pid)
    _assert_namespaced_deadlock(report, s)
    assert report["target"]["executable"] == "/opt/ctr/python3"
    assert not any("/opt/ctr" in w for w in report["warnings"]), report["warnings"]
    text, _ = harness.run_gdb_marked("pyhang report", pid=s.pid)
    assert "live process %d (pid 1 in its own PID namespace; TIDs below are the namespace's)" % s.pid in text


def test_core_of_a_process_in_a_container_speaks_its_tids_and_lists_each_thread_once(contained):
    s, exe = contained
    core = s.gcore()
    report = harness.report_json(core=core, executable=exe)
    # gdb's libthread_db lists each thread again under its namespace TID: those are not threads
    _assert_namespaced_deadlock(report, s)
    # AND lock-owner on such a second listing says what it is instead of guessing
    out = harness.run_gdb(["thread apply all lock-owner"], core=core, executable=exe)
    assert "gdb lists this thread twice" in out and "Traceback" not in out


def _namespaces():
    import sys
    sys.path.insert(0, os.path.join(harness.ROOT, "python"))
    from pyhang import namespaces
    return namespaces


@pytest.mark.parametrize("recorded, concluded", [
    ({0x10: 1, 0x20: 6}, {100: 1, 101: 6}),      # every thread read, all differ: a namespace
    ({0x10: 100, 0x20: 101}, {}),                # the host's TIDs themselves: none
    ({0x10: 1, 0x20: None}, {}),                 # one unreadable: no evidence
    ({0x10: 7, 0x20: 7}, {}),                    # two threads claim one TID: garbage
])
def test_a_core_is_concluded_to_be_namespaced_only_on_complete_consistent_evidence(recorded, concluded):
    namespaces = _namespaces()
    tids = namespaces.core_tids([(100, 0x10), (101, 0x20)], recorded.get, pid=100)
    assert tids.own == concluded
    assert tids.pid == (concluded.get(100) if concluded else None)
    # gdb's second listing of a thread under its namespace TID is recognised as such
    assert tids.listed_twice(6) == bool(concluded) and not tids.listed_twice(100)

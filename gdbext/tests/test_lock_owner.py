"""lock-owner: for every glibc lock kind, the blocked thread's lock and its
owner, from the lock word alone (no libc debug info), live and from a core,
in a C process and in a Python process; the same in the report's blocked_on."""
import os
import re

import pytest

import harness

PY = "/usr/bin/python3.11"


def start(scenario, program):
    if program == "c":
        return scenario([harness.fixture_path("prog_locks")])
    return scenario([PY, "-u", os.path.join(harness.SCENARIOS, "native_locks.py"),
                     harness.fixture_path("liblockfixture.so")])


def check_blocked_on(report, records):
    threads = {t["tid"]: t for t in report["threads"]}
    for r in records:
        b = threads[r["waiter"]]["blocked_on"]
        assert b is not None, r
        assert b["kind"] == harness.expected_lock_kind(r), (r, b)
        assert b["address"] == r["address"], (r, b)
        assert b["library"].endswith("liblockfixture.so")
        if r["lock"] in ("semaphore", "condvar", "futex", "rwlock-read-held"):
            assert b["owners"] == [], (r, b)
        else:
            assert b["owners"] == r["holders"], (r, b)
            assert b["owner_source"] == "lock-word"
            assert b["owner_alive"] is True
    holders = {h for r in records for h in r["holders"]}
    for tid in holders:  # holders sleep in pause(), on no lock
        b = threads[tid]["blocked_on"]
        assert b["kind"] == "syscall" and b["syscall"]["name"] == "pause" and b["owners"] == [], b


@pytest.mark.parametrize("program", ["c", "python"])
def test_every_lock_kind_owner_live_and_from_core(scenario, program):
    # GIVEN each glibc lock kind held by a known thread and waited on by another
    s = start(scenario, program)
    records = s.truth["records"]
    assert len(records) >= 11
    # WHEN pyhang reports on the live process, and on its core
    check_blocked_on(harness.report_json(pid=s.pid), records)
    exe = harness.fixture_path("prog_locks") if program == "c" else PY
    check_blocked_on(harness.report_json(executable=exe, core=s.gcore()), records)


def _under_headers(text):
    """{LWP: the line under gdb's `thread apply` header "Thread N (Thread 0x… (LWP x) …):"}."""
    lines = text.splitlines()
    out = {}
    for i, l in enumerate(lines[:-1]):
        m = re.match(r"Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\)", l)
        if m:
            out[int(m.group(1))] = lines[i + 1]
    return out


def test_thread_apply_all_lock_owner_prints_one_line_per_thread_under_gdbs_header_without_repeating_it(scenario):
    s = start(scenario, "c")
    text, out = harness.run_gdb_marked("thread apply all lock-owner", pid=s.pid)
    lines = _under_headers(text)
    # THEN every thread's line comes under gdb's own header, and does not name the thread again
    assert {r["waiter"] for r in s.truth["records"]} | {s.pid} <= set(lines), text
    assert not any(l.startswith("Thread ") for l in lines.values()), text
    for r in s.truth["records"]:
        line = lines[r["waiter"]]
        # (the lock named by the library's ELF symbol it lies in, as gdb names it: a static in .symtab here)
        assert ("0x%x" % r["address"]) in line, line
        assert re.search(r"\(\w+(\+0x[0-9a-f]+)? in liblockfixture\.so\)", line), line
        if r["lock"] == "mutex-normal":
            assert "(mutex_normal in liblockfixture.so)" in line, line
        if r["lock"] not in ("semaphore", "condvar", "futex", "rwlock-read-held"):
            assert "held by Thread" in line and "(LWP %d)" % r["holders"][0] in line, line
    rec = next(r for r in s.truth["records"] if r["lock"] == "rwlock-read-held")
    assert "read-held by 2 threads (glibc does not record which)" in lines[rec["waiter"]]
    rec = next(r for r in s.truth["records"] if r["lock"] == "mutex-recursive")
    assert "(locked 3 times)" in lines[rec["waiter"]]
    # A thread in another system call says which, and on no lock.
    assert lines[s.pid] == "waits in pause for a signal", lines[s.pid]
    assert "Traceback" not in out


def test_plain_lock_owner_names_its_thread_also_after_a_thread_apply(scenario):
    s = start(scenario, "c")
    rec = next(r for r in s.truth["records"] if r["lock"] == "mutex-recursive")
    select = 'python gdb.execute("thread %%d" %% next(t.num for t in gdb.selected_inferior().threads() ' \
             'if t.ptid[1] == %d))' % rec["waiter"]
    out = harness.run_gdb(["thread apply all lock-owner", select, "echo %s\\n" % harness.BEGIN, "lock-owner"],
                          pid=s.pid)
    text = out.split(harness.BEGIN + "\n", 1)[1]
    # THEN the selected thread's line names it, as gdb printed no header for it
    (line,) = [l for l in text.splitlines() if "0x%x" % rec["address"] in l]
    assert re.match(r"Thread \d+ \(LWP %d\) waits to lock mutex 0x%x" % (rec["waiter"], rec["address"]), line), line

"""A second look says what the first said.  A stop (the first report's
attach) interrupts every timed wait; the kernel resumes a futex wait or a
poll through restart_syscall, whose number replaces the call's in the
thread's record while its arguments stay in the registers.  The second
report, one that does not stop the process, and a core made after the
first all name the same waits on the same objects (the call named from
frame 0, or from a futex word still holding the value the wait expected),
and every one of those waits, having a timeout, is idle: the all-clear (from
the core, but for the poll, whose pipe a core gdb wrote does not describe)."""
import json
import os

import pytest

import harness

RESTART_SYSCALL = 219
TIMED = ("lock-timed", "condition-timed", "event-timed", "poll-timed")


def waits(doc, s):
    """{role: (kind, address, the poll's fds)} of the timed waiters."""
    threads = {t["tid"]: t for t in doc["threads"]}
    out = {}
    for role in TIMED:
        b = threads[harness.role_tid(s, role)]["blocked_on"] or {}
        sc = b.get("syscall") or {}
        out[role] = (b.get("kind"), b.get("address"), sc.get("name"), [f["fd"] for f in sc.get("fds") or []])
    return out


def params():
    """Debian's 3.11, pyenv's 3.8 and Debian unstable's 3.14 (glibc 2.43) in its root file system."""
    found = dict(harness.interpreters())
    return [pytest.param(found[n], id=n) for n in ("debian-3.11",) if n in found] + \
        [pytest.param(p, id=n) for n, p in sorted(found.items()) if n.startswith(("pyenv-3.8", "debian-sid-3.14"))]


@pytest.mark.parametrize("python", params())
def test_waits_resumed_through_restart_syscall_read_as_the_first_look_read_them(scenario, python):
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "timed_waits.py")], env=env)
    status, out, err = harness.pyhang_cli("report", "--json", "-p", s.pid)
    first = waits(harness.validated_report(json.loads(out)), s)
    # GIVEN the first look named each wait on its object
    assert first["lock-timed"][:2] == ("py-lock", s.truth["lock"]), first
    assert first["event-timed"][:2] == ("py-event", s.truth["event"]), first
    assert first["condition-timed"][0] == "py-condition", first
    assert first["poll-timed"][2:] == ("poll", [s.truth["read_fd"]]), first
    # AND its stop left the futex waits and the poll resumed through restart_syscall
    for role in ("lock-timed", "poll-timed"):
        assert harness.thread_syscall(s.pid, harness.role_tid(s, role)) == RESTART_SYSCALL, role
    # THEN a second look, one without a stop, and a core made now say the same of each
    core = s.gcore()
    for where, args in (("again", ["-p", s.pid]), ("no-stop", ["--no-stop", "-p", s.pid]), ("core", [*harness.core_options(exe), core, exe])):
        status, out, err = harness.pyhang_cli("report", "--json", *args)
        doc = harness.validated_report(json.loads(out))
        assert waits(doc, s) == first, (where, err)
        poll = next(t for t in doc["threads"] if t["tid"] == harness.role_tid(s, "poll-timed"))["blocked_on"]
        assert poll["syscall"].get("restarted") is True and poll["confidence"] == "likely", (where, poll)
        # AND every wait has a timeout, so every thread is idle and the report is the all-clear: a Lock's
        # acquire(timeout=...) is no wait of unknown owner (its futex wait has a timeout, or is resumed)
        accounts = {t["tid"]: t["account"] for t in doc["threads"]}
        assert accounts[harness.role_tid(s, "lock-timed")]["reason"] == "timed", (where, accounts)
        if where == "core":
            # (but a core gdb wrote records no fd table: who serves the polled pipe is not known, never the
            # all-clear)
            poller = accounts.pop(harness.role_tid(s, "poll-timed"))
            assert (poller["state"], poller["reason"], doc["exit_status"]) == ("unaccounted", "no-fd-table", 4), where
        else:
            assert doc["exit_status"] == 0, (where, doc["headline"])
        assert {a["state"] for a in accounts.values()} == {"idle"}, (where, doc["headline"])

"""Threads parked in blocking system calls other than futex are blocked on
the call and its object: the fd and, live, what /proc says it is and who
holds the other end of a pipe or socket; the fds a poll watches; the child
a wait4 waits for; the holder of a flock; how long a sleep lasts.  From a
core the same from the registers, the fd objects unknown."""
import json
import os

import pytest

import harness

PY = "/usr/bin/python3.11"


@pytest.fixture(scope="module")
def debian():
    """One syscall_waits.py process (and its child) for the Debian tests."""
    s = harness.python_scenario(PY, "syscall_waits.py").start()
    yield s
    s.stop()


def by_role(report, truth):
    threads = {t["tid"]: t for t in report["threads"]}
    return {t["role"]: (t, threads[t["tid"]]) for t in truth["threads"]}


def called(blocked):
    """The call a thread is parked in, restart_syscall resolved."""
    s = blocked["syscall"]
    if s["name"] == "restart_syscall" and s.get("restarts"):
        return s["restarts"]["syscall"]
    return s["name"]


# The system calls a C library function may make: glibc 2.43's poll() is ppoll(2).
LIBC_CALLS = {"poll": ("poll", "ppoll")}


def check_calls(report, truth):
    for role, (want, got) in by_role(report, truth).items():
        b = got["blocked_on"]
        assert b is not None and b["kind"] == "syscall", (role, b)
        assert called(b) in LIBC_CALLS.get(want["syscall"], (want["syscall"],)), (role, b)
        assert "syscall " not in b["detail"] and "system call (number" not in b["detail"], b["detail"]
        assert b["owners"] == [] and b["address"] is None


def test_each_thread_names_its_system_call_and_object_live(debian):
    s = debian
    # WHEN pyhang reports on the live process
    report = harness.report_json(pid=s.pid)
    check_calls(report, s.truth)
    roles = by_role(report, s.truth)
    # THEN the pipe read names the pipe, its read end, and the holder of its write end: this process
    want, got = roles["reader"]
    sc = got["blocked_on"]["syscall"]
    assert sc["fd"] == want["fd"] and sc["object"]["link"] == want["link"] and sc["object"]["access"] == "read"
    (holder,) = sc["object"]["holders"]
    assert holder["pid"] == s.pid and sc["object"]["holders_complete"]
    assert "%s, read end; its write end is held only by this process" % want["link"] in got["blocked_on"]["detail"]
    # AND the poll names both fds it watches, read from the pollfd array in target memory
    want, got = roles["poller"]
    if got["blocked_on"]["syscall"]["name"] == "poll":
        fds = got["blocked_on"]["syscall"]["fds"]
        assert [f["fd"] for f in fds] == want["fds"] and {f["direction"] for f in fds} == {"read"}
        assert fds[0]["object"]["link"] == s.truth["idle_link"]
        assert got["blocked_on"]["syscall"]["timeout_ns"] is None
    # AND the socket read names a unix socket and its peer, held by this process
    want, got = roles["receiver"]
    obj = got["blocked_on"]["syscall"]["object"]
    assert obj["link"] == want["link"] and obj["socket"]["protocol"] == "unix"
    assert "socket:[%d]" % obj["socket"]["peer_inode"] == want["peer_link"]
    assert [h["pid"] for h in obj["holders"]] == [s.pid]
    # AND the flock names the file and the child that holds the lock
    want, got = roles["locker"]
    sc = got["blocked_on"]["syscall"]
    assert sc["object"]["path"] == s.truth["lock_path"] and want["holder"] in sc["lock_holders"]
    assert "locked by PID %d" % want["holder"] in got["blocked_on"]["detail"]
    assert "to take an exclusive flock" in got["blocked_on"]["detail"] and sc["lock_mode"] == "exclusive"
    # AND main waits in wait4 for the child; the sleep says how long it lasts
    assert roles["main"][1]["blocked_on"]["syscall"]["child"] == s.truth["child"]
    assert "waits in wait4 for child PID %d to exit" % s.truth["child"] in roles["main"][1]["blocked_on"]["detail"]
    sleep = roles["sleeper"][1]["blocked_on"]["syscall"]
    assert sleep["absolute"] and 3500e9 < sleep["left_ns"] <= 3600e9, sleep
    assert "sleeps in clock_nanosleep for another" in roles["sleeper"][1]["blocked_on"]["detail"]
    # AND a system call's wait has no owning thread: no "owners unknown" verdict for it; the wait for the
    # child is beyond this report, which says so and names the command that looks at both
    assert [v["kind"] for v in report["verdicts"]] == ["waits-on-process", "unaccounted"] and report["deadlocks"] == []
    (v, unaccounted) = report["verdicts"]
    # AND the closed-world account: the reads of pipes and the socket only this process holds are not accounted
    # for, the file lock the child holds is a wait on another process, the sleep and the pause are idle
    accounts = {role: (got["account"]["state"], got["account"]["reason"]) for role, (_, got) in roles.items()}
    assert accounts == {"main": ("elsewhere", "child"), "reader": ("unaccounted", "own-process"),
                        "poller": ("unaccounted", "own-process"), "receiver": ("unaccounted", "own-process"),
                        "sleeper": ("idle", "timed"), "locker": ("elsewhere", "file-lock"),
                        "pauser": ("idle", "signal")}, accounts
    assert sorted(unaccounted["threads"]) == sorted(roles[r][1]["tid"] for r in ("reader", "poller", "receiver",
                                                                               "locker"))
    assert next(w for w in unaccounted["facts"]["waits"] if w["tid"] == roles["locker"][1]["tid"])["pids"] == \
        [s.truth["child"]]
    assert report["exit_status"] == 4 and report["headline"].startswith("Waits on PID %d: " % s.truth["child"])
    assert v["facts"]["waits"] == [{"tid": roles["main"][1]["tid"], "syscall": "wait4", "fd": None, "link": None,
                                    "pids": [s.truth["child"]], "peers": []}] and v["facts"]["root"] == s.pid
    assert "waits in wait4 for its child PID %d to exit" % s.truth["child"] in v["text"]


def test_the_child_reading_a_pipe_names_the_parent_waiting_for_it(debian):
    s = debian
    # WHEN pyhang reports on the child, which reads the job pipe
    report = harness.report_json(pid=s.truth["child"])
    (thread,) = report["threads"]
    b = thread["blocked_on"]
    sc = b["syscall"]
    # THEN the write end is held only by the parent, whose main thread waits in wait4 for this process
    assert sc["name"] == "read" and sc["object"]["link"] == s.truth["job_link"]
    (holder,) = sc["object"]["holders"]
    assert holder["pid"] == s.pid and holder["fds"] == [s.truth["job_fd"]]
    (waiter,) = holder["threads"]
    assert waiter == {"tid": s.pid, "comm": "main", "syscall": "wait4", "pid": s.truth["child"]}
    assert ("its write end is held only by PID %d (main), whose thread LWP %d \"main\" waits in wait4 for PID %d "
            "(this process)" % (s.pid, s.pid, s.truth["child"])) in b["detail"], b["detail"]
    # AND the report says that what it waits for is in another process, and how to look at both
    (v,) = [v for v in report["verdicts"] if v["kind"] == "waits-on-process"]
    assert v["threads"] == [thread["tid"]] and v["facts"]["root"] == s.pid
    (peer,) = v["facts"]["waits"][0].pop("peers")   # the parent, by its command and command line
    assert peer == {"pid": s.pid, "comm": "main", "title": "%s -u %s" % (PY, os.path.join(harness.SCENARIOS,
                                                                                        "syscall_waits.py"))}
    assert v["facts"]["waits"] == [{"tid": thread["tid"], "syscall": "read", "fd": sc["fd"],
                                    "link": s.truth["job_link"], "pids": [s.pid]}]
    assert "`pyhang report --tree -p %d`" % s.pid in v["text"]


def test_as_a_tree_parent_and_child_are_a_likely_deadlock_unless_the_parents_sleepers_write(debian):
    s = debian
    # WHEN pyhang looks at the parent and its child together
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    doc = harness.validated_tree(json.loads(out))
    roles = {t["role"]: t["tid"] for t in s.truth["threads"]}
    # THEN the parent's waiters and the child are one knot: the child reads the job pipe only the parent can
    # write, the parent waits for the child, the locker for the child's flock, and the parent's other waiters
    # for pipes and sockets only the parent holds
    (d,) = doc["deadlocks"]
    assert d["processes"] == sorted([s.pid, s.truth["child"]]) and d["confidence"] == "likely", d
    assert sorted(d["threads"]) == sorted([roles[r] for r in ("main", "reader", "poller", "receiver", "locker")] +
                                          [s.truth["child"]])
    # AND what could still end it is named: the parent's sleeping thread and the one in pause(), which hold
    # the other ends too (a thread of the process may write them when it wakes: likely, never certain)
    got = {(z["tid"], z["call"]) for z in d["sleepers"]}
    calls = {t["role"]: t["syscall"] for t in s.truth["threads"]}
    assert got == {(roles["sleeper"], calls["sleeper"]), (roles["pauser"], "pause")}, d["sleepers"]
    assert status == 3 and doc["exit_status"] == 3, (status, doc["headline"])


def test_from_a_core_the_calls_are_named_and_the_fd_objects_unknown(debian):
    s = debian
    report = harness.report_json(executable=PY, core=s.gcore())
    check_calls(report, s.truth)
    roles = by_role(report, s.truth)
    for role in ("reader", "receiver", "locker"):
        want, got = roles[role]
        sc = got["blocked_on"]["syscall"]
        assert sc["fd"] == want["fd"] and sc["object"] is None and not sc["fd_table"], role
        assert "unknown (cores do not record fd tables)" in got["blocked_on"]["detail"]
    poll = roles["poller"][1]["blocked_on"]["syscall"]
    if poll["name"] == "poll":
        assert [f["fd"] for f in poll["fds"]] == roles["poller"][0]["fds"]
        assert all(f["object"] is None for f in poll["fds"])
    assert roles["main"][1]["blocked_on"]["syscall"]["child"] == s.truth["child"]
    # AND a core records no fd table: those waits are not accounted for, never an all-clear
    for role in ("reader", "receiver", "locker"):
        assert roles[role][1]["account"]["reason"] == "no-fd-table", role
    assert report["exit_status"] == 4


def other_interpreters():
    """The oldest and newest pyenv builds, 3.10 (the last whose time.sleep is select), and
    Debian unstable's 3.15 on glibc 2.43."""
    chosen = [(n, p) for n, p in harness.interpreters()
              if n.startswith(("pyenv-3.6.", "pyenv-3.10.", "pyenv-3.13.", "debian-sid-3.15"))]
    return [pytest.param(path, id=name) for name, path in chosen]


@pytest.mark.parametrize("python", other_interpreters())
def test_other_interpreters_name_the_calls_their_threads_sleep_in(scenario, python):
    # GIVEN the same threads under a stripped pyenv interpreter (time.sleep is
    # select(0, …) before 3.11, which glibc makes with pselect6; clock_nanosleep after)
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "syscall_waits.py")], env=env)
    report = harness.report_json(pid=s.pid)
    check_calls(report, s.truth)
    sleeper = by_role(report, s.truth)["sleeper"][1]["blocked_on"]
    if sleeper["syscall"]["name"] == "pselect6":
        # the timeout Python computed from its deadline, a little after the thread recorded itself
        assert (s.truth["sleep_seconds"] - 60) * 10 ** 9 < sleeper["syscall"]["timeout_ns"] <= s.truth["sleep_seconds"] * 10 ** 9
        assert sleeper["detail"].startswith("sleeps in pselect6 for 3")


def tcp_interpreters():
    """Debian's 3.11, and Debian unstable's 3.15 in its root (its own network
    namespace is the host's: the container shares it)."""
    return [pytest.param(p, id=n) for n, p in harness.interpreters() if n in ("debian-3.11", "debian-sid-3.15")]


@pytest.mark.parametrize("python", tcp_interpreters())
def test_a_loopback_tcp_peer_is_named_accepted_or_in_a_listen_backlog(scenario, python):
    # GIVEN threads reading two loopback TCP connections whose other ends a child
    # holds: one accepted, one still in the child's listener's backlog
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "tcp_peers.py")])
    child = s.truth["child"]
    report = harness.report_json(pid=s.pid)
    roles = by_role(report, s.truth)
    # THEN the accepted connection's peer is held by the child, found from the TCP tables
    want, got = roles["accepted"]
    sc = got["blocked_on"]["syscall"]
    assert sc["object"]["link"] == want["link"] and sc["object"]["socket"]["protocol"] == "tcp"
    assert [h["pid"] for h in sc["object"]["holders"]] == [child] and sc["object"]["holders_complete"]
    assert "its peer is held only by PID %d" % child in got["blocked_on"]["detail"], got["blocked_on"]["detail"]
    # AND the other's peer waits in the backlog of the listener only the child holds
    want, got = roles["backlog"]
    sock = got["blocked_on"]["syscall"]["object"]["socket"]
    assert sock["peer_in_backlog"] and "socket:[%d]" % sock["peer_inode"] == s.truth["listener_link"]
    assert [h["pid"] for h in got["blocked_on"]["syscall"]["object"]["holders"]] == [child]
    assert "not yet accepted" in got["blocked_on"]["detail"] and "held only by PID %d" % child in \
        got["blocked_on"]["detail"], got["blocked_on"]["detail"]


@pytest.mark.parametrize("python", tcp_interpreters())
def test_a_connection_in_this_processs_own_listen_backlog_is_said_to_be_one_only_it_can_accept(scenario, python):
    # GIVEN threads reading a TCP and a unix connection the process made to its own listeners, never accepted
    s = scenario([python, "-u", os.path.join(harness.SCENARIOS, "own_backlog.py")])
    for where, report in (("live", harness.report_json(pid=s.pid)),
                          ("no-stop", json.loads(harness.pyhang_cli("report", "--json", "--no-stop", "-p", s.pid)[1]))):
        roles = by_role(report, s.truth)
        # THEN the TCP connection's other end is in the backlog of the listener only this process holds
        want, got = roles["tcp-reader"]
        obj = got["blocked_on"]["syscall"]["object"]
        listener = s.truth["listeners"]["tcp"]
        assert obj["socket"]["peer_in_backlog"] and "socket:[%d]" % obj["socket"]["peer_inode"] == listener["link"]
        assert "its peer is a connection not yet accepted by this process's own listening socket, fd %d: no other " \
               "process can accept it" % listener["fd"] in got["blocked_on"]["detail"], (where, got["blocked_on"])
        # AND the unix connection, whose peer the kernel does not name, is one not yet accepted, never one
        # held by no process; its listener is named only where it is the one here with connections waiting
        want, got = roles["unix-reader"]
        obj, detail = got["blocked_on"]["syscall"]["object"], got["blocked_on"]["detail"]
        assert obj["socket"]["peer_in_backlog"] and "held by no process" not in detail, (where, detail)
        if obj["socket"].get("backlog_inferred"):
            listener = s.truth["listeners"]["unix"]
            assert "socket:[%d]" % obj["socket"]["peer_inode"] == listener["link"], (where, obj)
            assert "not yet accepted by this process's own listening socket, fd %d at %s (likely: " % (
                listener["fd"], s.truth["path"]) in detail, (where, detail)
        else:
            assert detail.endswith("its peer is a connection not yet accepted: it waits in the backlog of a listening "
                                   "socket (the kernel does not say which)"), (where, detail)


def test_a_wait_on_a_server_started_apart_says_no_tree_holds_it_and_how_to_read_it(scenario):
    # GIVEN a client waiting for the answer of a daemon (its parent init): no tree from the client holds it
    s = scenario([PY, "-u", os.path.join(harness.SCENARIOS, "server_apart.py")])
    server, client = s.truth["server"], harness.role_tid(s, "client")
    assert s.truth["server_parent"] != s.pid
    for where, doc, text in harness.cli_live_and_core_reports(s, PY, text=True, recorded=True):
        if where == "core":   # gdb's core records no fd table: its wait is judged from its raw facts
            continue
        # THEN the wait is on the server, which the facts say is outside any tree from here
        (v,) = [v for v in doc["verdicts"] if v["kind"] == "waits-on-process"]
        assert v["threads"] == [client] and v["facts"]["outside"] == [server], (where, v["facts"])
        # AND the words send the reader to that process, not to --tree, which would not look at it
        assert "which no tree of processes from PID %d holds" % s.pid in v["text"], (where, v["text"])
        assert "`pyhang report -p %d` reads it when it runs Python" % server in v["text"], (where, v["text"])
        assert "--tree" not in v["text"] and doc["exit_status"] == 4, (where, doc["headline"])
    # AND the tree says the same: a wait on a process outside it
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", s.pid)
    tree = harness.validated_tree(json.loads(out))
    assert [o["pids"] for o in tree["outside"]] == [[server]] and status == 4, (tree["headline"], tree["outside"])

"""System-call waits without gdb: every x86_64 call is named, a parked
thread's registers (and what its pointers led to) become its blocked-on,
garbage gives no crash and no bare number, and /proc names the other end of
this test's own pipes, sockets and file locks."""
import fcntl
import os
import signal
import socket
import subprocess
import tempfile
import sys
import threading
import time

import pytest

from pyhang import fd_holders, procfs
from pyhang.analysis import syscalls
from pyhang.analysis.syscall_names import NAMES
from pyhang.model.files import FdObject
from pyhang.model.kinds import WaitKind
from pyhang.model.snapshot import ThreadSnapshot
from pyhang.model.report import NativeFrame
from pyhang.model.waits import SyscallFacts, SyscallWait, from_data, syscall_of, to_data
from pyhang.render.locks import not_blocked, summary
from pyhang.render.json import _blocked
from pyhang.render.names import ThreadNames
from pyhang.render.syscalls import call_name



def fd_objects(files):
    """{fd: FdObject} of pyhang.fd_holders.files()'s {fd: object}, as a collector answers."""
    return {fd: from_data(FdObject, obj) for fd, obj in files.items()}

def nr(name):
    return next(n for n, v in NAMES.items() if v == name)


def thread(call, *args, syscall=None, frames=()):
    regs = {"orig_rax": nr(call) if isinstance(call, str) else call}
    regs.update(zip(syscalls.ARGUMENTS, args))
    return ThreadSnapshot(num=1, tid=100, registers=regs, syscall=from_data(SyscallFacts, syscall), frames=list(frames))


def line(b):
    return summary(b, ThreadNames([]))


def test_every_x86_64_system_call_up_to_the_newest_has_a_name():
    assert all(n in NAMES for n in range(0, 335)) and all(n in NAMES for n in range(424, 468))
    assert syscalls.name(1) == "write" and syscalls.name(230) == "clock_nanosleep"
    # a number no kernel has is said to be one, never given bare
    assert syscalls.name(99999) == 99999 and call_name(syscalls.name(99999)) == "unknown system call (number 99999)"
    assert call_name(syscalls.name(1)) == "write"
    assert not_blocked(7, ThreadNames([]), syscalls.name(99999)).endswith(
        "is not blocked on a lock (in the unknown system call (number 99999) system call)")


def test_the_blocking_calls_are_those_a_thread_parks_in():
    names = {NAMES[n] for n in syscalls.BLOCKING}
    assert {"read", "write", "poll", "ppoll", "select", "pselect6", "epoll_wait", "wait4", "waitid", "flock",
            "nanosleep", "clock_nanosleep", "pause", "rt_sigtimedwait", "restart_syscall", "accept4",
            "recvfrom", "sendto", "connect"} <= names
    assert "getpid" not in names and "mmap" not in names


def test_a_thread_not_parked_or_in_futex_has_no_syscall_wait():
    assert syscalls.syscall_wait(thread("getpid")) is None
    assert syscalls.syscall_wait(thread("futex", 0x1000, 0, 0)) is None     # the lock decoders answer
    assert syscalls.syscall_wait(ThreadSnapshot(num=1, tid=1, registers={"orig_rax": (1 << 64) - 1})) is None
    assert syscalls.syscall_wait(ThreadSnapshot(num=1, tid=1, registers={})) is None


def test_a_read_from_a_core_names_its_fd_and_says_the_object_is_unknown():
    b = syscalls.syscall_wait(thread("read", 5, 0x7000, 1), files=None)
    assert b.kind == WaitKind.SYSCALL and b.owners == [] and b.syscall.fd == 5 and b.syscall.object is None
    assert line(b) == "waits in read on fd 5: unknown (cores do not record fd tables)"
    j = _blocked(b, ThreadNames([]))["syscall"]
    assert j == {"name": "read", "number": 0, "fd_table": False, "fd": 5, "object": None}


def test_a_pipe_read_names_the_holder_of_its_write_end_and_its_waiting_thread():
    files = {5: {"kind": "pipe", "link": "pipe:[48213]", "inode": 48213, "access": "read", "pid": 4121,
                 "holders_complete": True,
                 "holders": [{"pid": 4120, "comm": "python3", "fds": [7],
                              "threads": [{"tid": 4120, "comm": "python3", "nr": nr("wait4"),
                                           "args": [4121, 0, 0, 0, 0, 0]},
                                          {"tid": 4122, "comm": "idle", "nr": nr("clock_nanosleep"),
                                           "args": [1, 1, 0, 0, 0, 0]}]}]}}
    b = syscalls.syscall_wait(thread("read", 5, 0x7000, 1), files=fd_objects(files))
    assert line(b) == ('waits in read on fd 5: pipe:[48213], read end; its write end is held only by PID 4120 '
                       '(python3), whose thread LWP 4120 "python3" waits in wait4 for PID 4121 (this process)')
    (holder,) = _blocked(b, ThreadNames([]))["syscall"]["object"]["holders"]
    assert holder["threads"] == [{"tid": 4120, "comm": "python3", "syscall": "wait4", "pid": 4121}]


def test_a_pipe_nobody_else_holds_says_so():
    files = {3: {"kind": "pipe", "link": "pipe:[9]", "access": "write", "pid": 1, "holders": [],
                 "holders_complete": False}}
    b = syscalls.syscall_wait(thread("write", 3, 0, 1), files=fd_objects(files))
    assert line(b).endswith("its read end is held by no process pyhang could scan "
                            "(the scan of /proc stopped at its bound)")


def test_a_socket_whose_peer_was_not_looked_up_never_reads_as_held_by_no_process():
    # GIVEN a TCP socket to another host: /proc has no holders to give for its peer
    files = {6: {"kind": "socket", "link": "socket:[77]", "inode": 77, "pid": 1,
                 "socket": {"protocol": "tcp", "local": "10.0.0.2:41000", "peer": "10.0.0.9:5432",
                            "state": "ESTABLISHED"}}}
    b = syscalls.syscall_wait(thread("recvfrom", 6, 0, 1), files=fd_objects(files))
    # THEN its peer is not said to be held by nobody, and the JSON has no holders list
    assert "no process" not in line(b) and "held" not in line(b), line(b)
    assert "holders" not in _blocked(b, ThreadNames([]))["syscall"]["object"]


def _backlog_socket(protocol, holders, **socket_facts):
    obj = {"kind": "socket", "link": "socket:[70]", "inode": 70, "pid": 1,
           "socket": dict({"protocol": protocol, "peer_in_backlog": True}, **socket_facts)}
    if holders is not None:
        obj["holders"], obj["holders_complete"] = holders, True
    return fd_objects({6: obj})


def test_a_connection_in_this_processs_own_listen_backlog_says_only_this_process_can_accept_it():
    # GIVEN a loopback TCP connection not yet accepted, whose listening socket only this process holds (fd 5)
    own = [{"pid": 1, "comm": "app", "fds": [5], "threads": []}]
    b = syscalls.syscall_wait(thread("recvfrom", 6, 0, 1), files=_backlog_socket("tcp", own, peer_inode=71))
    # THEN the other end is named as such, never as held by no process
    assert line(b).endswith("its peer is a connection not yet accepted by this process's own listening socket, "
                            "fd 5: no other process can accept it"), line(b)
    # AND a listener another process holds is said to be that process's
    other = [{"pid": 4121, "comm": "server", "fds": [3], "threads": []}]
    b = syscalls.syscall_wait(thread("recvfrom", 6, 0, 1), files=_backlog_socket("tcp", other, peer_inode=71))
    assert line(b).endswith("its peer waits, not yet accepted, in the backlog of a listening socket, which is held "
                            "only by PID 4121 (server)"), line(b)


def test_a_unix_connection_not_yet_accepted_says_so_and_which_listener_only_when_one_has_connections_waiting():
    # GIVEN a unix socket whose peer the kernel names not (no process accepted it): no listener known
    b = syscalls.syscall_wait(thread("recvfrom", 6, 0, 1), files=_backlog_socket("unix", None))
    assert line(b).endswith("its peer is a connection not yet accepted: it waits in the backlog of a listening "
                            "socket (the kernel does not say which)"), line(b)
    assert "held" not in line(b), line(b)
    # AND with the one listener here that has connections waiting, held by this process: likely that one
    own = [{"pid": 1, "comm": "app", "fds": [3], "threads": []}]
    b = syscalls.syscall_wait(thread("recvfrom", 6, 0, 1), files=_backlog_socket(
        "unix", own, peer_inode=71, peer_path="/run/app.sock", backlog_inferred=True))
    assert line(b).endswith("its peer is a connection not yet accepted by this process's own listening socket, fd 3 "
                            "at /run/app.sock (likely: the only listening socket here with connections waiting): no "
                            "other process can accept it"), line(b)
    assert "peer socket:[71]" not in line(b), line(b)


def test_unix_socket_states_from_sock_diag_name_a_connection_in_a_backlog():
    # (fd_holders._unix_peer over what sock_diag says: connected with no peer inode is unaccepted)
    diag = {70: {"peer": 0, "state": procfs.UNIX_CONNECTED, "queued": 0},
            71: {"peer": 0, "state": procfs.UNIX_LISTENING, "queued": 1},
            72: {"peer": 0, "state": procfs.UNIX_LISTENING, "queued": 0},
            73: {"peer": 74, "state": procfs.UNIX_CONNECTED, "queued": 0}}
    assert fd_holders._unix_peer(diag, 73) == {"peer_inode": 74}
    assert fd_holders._unix_peer(diag, 70) == {"peer_in_backlog": True, "peer_inode": 71, "backlog_inferred": True}
    diag[72]["queued"] = 2   # two listeners with connections waiting: which one is not known
    assert fd_holders._unix_peer(diag, 70) == {"peer_in_backlog": True}
    assert fd_holders._unix_peer(diag, 72) is None and fd_holders._unix_peer(diag, 99) is None


def test_poll_names_the_fds_read_from_target_memory_and_its_timeout():
    t = thread("poll", 0x5000, 2, 1500, syscall={"memory": {"pollfds": [[3, 1], [8, 4], [-1, 1]]}})
    assert syscalls.fds_wanted(t.registers, t.syscall.memory) == [3, 8]
    b = syscalls.syscall_wait(t, files=None)
    assert [(f["fd"], f["direction"]) for f in b.syscall.fds] == [(3, "read"), (8, "write")]
    assert line(b) == ("waits in poll on 2 fds: 3 to read, 8 to write; what they are is unknown (cores do not "
                       "record fd tables) for 1.5 s")
    # the array could not be read: said so, no fd invented
    b = syscalls.syscall_wait(thread("poll", 0x5000, 2, -1 & 0xFFFFFFFF, syscall={"memory": {"pollfds": None}}))
    assert b.syscall.fds is None and line(b) == "waits in poll on fds it could not read from target memory, with no timeout"


def test_select_asks_for_its_fd_sets_and_with_no_fds_is_a_sleep():
    regs = thread("pselect6", 9, 0x100, 0, 0, 0x200).registers
    assert syscalls.memory_wanted(regs) == [("readfds", "fd_set", (0x100, 9)), ("timeout", "timespec", (0x200,))]
    sleep = thread("pselect6", 0, 0, 0, 0, 0x200, syscall={"memory": {"timeout": [3600, 0]}})
    assert line(syscalls.syscall_wait(sleep)) == "sleeps in pselect6 for 3600 s"
    # a garbage nfds asks for no bitmap
    assert syscalls.memory_wanted(thread("select", 1 << 40, 0x100, 0, 0, 0).registers) == []


def test_sleeps_give_their_duration_absolute_ones_the_time_left():
    rel = thread("nanosleep", 0x300, syscall={"memory": {"timeout": [0, 250000000]}})
    assert line(syscalls.syscall_wait(rel)) == "sleeps in nanosleep for 250 ms"
    absolute = thread("clock_nanosleep", 1, 1, 0x300,
                      syscall={"memory": {"timeout": [5000, 0]}, "clock_now_ns": 1400 * 10 ** 9})
    assert syscalls.clock_wanted(absolute.registers) == 1
    assert line(syscalls.syscall_wait(absolute)) == "sleeps in clock_nanosleep for another 3600 s (until 5000.000 s on CLOCK_MONOTONIC)"
    unread = thread("nanosleep", 0x300, syscall={"memory": {"timeout": None}})
    assert line(syscalls.syscall_wait(unread)) == "sleeps in nanosleep (its duration could not be read)"


@pytest.mark.parametrize("pid,text", [(-1, "any child"), (4121, "child PID 4121"), (0, "any child in its process group"),
                                      (-77, "any child in process group 77")])
def test_wait4_names_the_child_it_waits_for(pid, text):
    b = syscalls.syscall_wait(thread("wait4", pid & 0xFFFFFFFFFFFFFFFF, 0, 0, 0))
    assert line(b) == "waits in wait4 for %s to exit" % text and b.syscall.child == pid


@pytest.mark.parametrize("children,child,text", [([4122], 4122, "its child PID 4122"), (None, None, "its child"),
                                                 ([4122, 4200], None, "its child")])
def test_a_vfork_waits_for_the_one_child_its_thread_made_to_exec_or_exit(children, child, text):
    # a vfork parent waits until its child execs or exits: the child is the one process /proc says the thread
    # made and has not reaped (none known, a core, or several: not named), and the wait is on another process
    from pyhang.analysis import account
    b = syscalls.syscall_wait(thread("vfork", syscall={"children": children}))
    assert line(b) == "waits in vfork for %s to exec or exit" % text and b.syscall.child == child
    assert _blocked(b, ThreadNames([]))["syscall"]["child"] == child
    assert account.syscall_class(b, 4000) == ("elsewhere", "child", [child] if child else [])


def test_restart_syscall_is_resolved_from_the_kernel_or_frame_0_or_said_unknown():
    from_proc = thread("restart_syscall", syscall={"proc_syscall": nr("clock_nanosleep")})
    assert line(syscalls.syscall_wait(from_proc)) == "waits in restart_syscall, restarting clock_nanosleep (the kernel's record)"
    from_frame = thread("restart_syscall", frames=[NativeFrame(pc=1, function="__poll", library="libc.so.6")])
    b = syscalls.syscall_wait(from_frame)
    assert b.confidence == "likely"
    assert line(b) == "waits in restart_syscall, restarting poll (its libc frame is poll) [likely]"
    unknown = thread("restart_syscall", syscall={"proc_syscall": nr("restart_syscall")})
    assert line(syscalls.syscall_wait(unknown)) == "waits in restart_syscall, restarting a call it does not record (unknown)"


def test_flock_names_the_holder_from_proc_locks():
    files = {4: {"kind": "file", "path": "/tmp/l", "pid": 10, "lock_holders": [{"pid": 11}, {"pid": 10}]}}
    b = syscalls.syscall_wait(thread("flock", 4, 2), files=fd_objects(files))   # LOCK_EX
    assert line(b) == "waits in flock on fd 4: file /tmp/l; to take an exclusive flock; locked by PID 11"
    shared = syscalls.syscall_wait(thread("flock", 4, 1), files=fd_objects(files))   # LOCK_SH
    assert syscall_of(shared).lock_mode == "shared"


def test_an_fcntl_lock_wait_says_its_range_and_garbage_says_none():
    b = syscalls.syscall_wait(thread("fcntl", 4, syscalls.F_SETLKW, 0x1000,
                                     syscall={"memory": {"flock": (1, 0, 100, 50, 0)}}))
    assert syscall_of(b).lock_range == {"type": "write", "whence": "start", "start": 100, "length": 50}
    assert line(b).startswith("waits in fcntl on fd 4: ") and "to write-lock bytes 100-149 (fcntl)" in line(b)
    whole = syscalls.syscall_wait(thread("fcntl", 4, syscalls.F_OFD_SETLKW, 0x1000,
                                         syscall={"memory": {"flock": (0, 2, 0, 0, 0)}}))
    assert "to read-lock from byte 0 to the end (from the file's end) (fcntl, an open file description lock)" \
        in line(whole)
    unread = syscalls.syscall_wait(thread("fcntl", 4, syscalls.F_SETLKW, 0x1000))
    assert syscall_of(unread).lock_range is None and "-lock" not in line(unread)
    assert syscalls.memory_wanted({"orig_rax": 72, "rdi": 4, "rsi": syscalls.F_SETLKW, "rdx": 0x1000}) == \
        [("flock", "flock", (0x1000,))]


def test_garbage_registers_give_words_never_a_crash():
    for call in syscalls._ROLES:
        if call not in {v for v in NAMES.values()}:
            continue
        t = thread(call, *([0xFFFFFFFFFFFFFFFF] * 6), syscall={"memory": {"pollfds": [[-5, 0]], "timeout": None}})
        b = syscalls.syscall_wait(t, files={})
        if b is not None:
            text = line(b)
            assert text and "syscall " not in text, (call, text)


# ---- /proc, on this test's own process ------------------------------------

def test_proc_names_the_process_holding_the_write_end_of_a_pipe_and_its_system_call():
    r, w = os.pipe()
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(r)
            os.close(ready_r)
            os.close(ready_w)   # tells the parent it is about to pause
            signal.pause()
        finally:
            os._exit(0)
    try:
        os.close(w)
        os.close(ready_w)
        os.read(ready_r, 1)   # EOF: the child closed its end
        for _ in range(5000):   # until it sleeps in pause (as the harness waits for scenarios to park)
            call = procfs.thread_syscall(child, child)
            if call and call[0] == nr("pause"):
                break
            time.sleep(0.001)
        obj = fd_holders.files(os.getpid(), [r])[r]
        assert obj["kind"] == "pipe" and obj["access"] == "read" and obj["link"] == os.readlink("/proc/self/fd/%d" % r)
        (holder,) = obj["holders"]
        assert holder["pid"] == child and obj["holders_complete"]
        assert [(t["tid"], t["nr"]) for t in holder["threads"]] == [(child, nr("pause"))]
    finally:
        os.kill(child, 9)
        os.waitpid(child, 0)
        os.close(r)


def test_proc_names_a_unix_socket_peer_and_who_holds_it():
    left, right = socket.socketpair()
    with left, right:
        obj = fd_holders.files(os.getpid(), [left.fileno()])[left.fileno()]
        assert obj["kind"] == "socket" and obj["socket"]["protocol"] == "unix"
        assert "socket:[%d]" % obj["socket"]["peer_inode"] == os.readlink("/proc/self/fd/%d" % right.fileno())
        (holder,) = obj["holders"]
        assert holder["pid"] == os.getpid() and holder["fds"] == [right.fileno()]


def test_proc_names_a_tcp_socket_by_its_addresses():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    with server:
        obj = fd_holders.fd_object(os.getpid(), server.fileno())
        files = fd_holders.files(os.getpid(), [server.fileno()])
        s = files[server.fileno()]["socket"]
        assert obj["kind"] == "socket" and s["protocol"] == "tcp" and s["state"] == "LISTEN"
        assert s["local"] == "127.0.0.1:%d" % server.getsockname()[1]


def test_proc_names_the_holder_of_a_file_lock_and_a_closed_fd():
    with tempfile.NamedTemporaryFile() as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        obj = fd_holders.fd_object(os.getpid(), f.fileno())
        assert obj["kind"] == "file" and obj["path"] == f.name
        assert os.getpid() in [h["pid"] for h in obj["lock_holders"]]
    assert fd_holders.fd_object(os.getpid(), 99999) == {"kind": "closed"}


def _zombie(how):
    """A child of this process that ended `how` ("exit 3", "kill") and is not reaped: its PID."""
    pid = os.fork()
    if pid == 0:
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(3)
    while (procfs.stat(pid) or {}).get("state") != "Z":
        time.sleep(0.01)
    return pid


def test_a_zombie_keeps_its_wait_status_until_it_is_reaped_exit_status_or_signal():
    # GIVEN two children not reaped: one exited with status 3, one killed by SIGKILL
    exited, killed = _zombie("exit 3"), _zombie("kill")
    # WHEN their stat is read, THEN it gives the wait status waitpid then gives their parent
    read = {pid: procfs.zombie_status(pid) for pid in (exited, killed)}
    reaped = {pid: os.waitpid(pid, 0)[1] for pid in (exited, killed)}
    assert read == reaped
    assert os.WEXITSTATUS(read[exited]) == 3 and os.WTERMSIG(read[killed]) == signal.SIGKILL
    # AND once reaped there is nothing left to read
    assert procfs.zombie_status(exited) is None and procfs.stat(exited) is None


def test_proc_stat_is_parsed_past_a_command_name_with_spaces_and_parentheses():
    text = "123 (a) b) (c) S 45 123 123 0 -1 4194560 1 0 0 0 7 5 0 0 20 0 1 0 98765 1000 10"
    assert procfs.parse_stat(text) == {"state": "S", "ppid": 45, "comm": "a) b) (c", "start_ticks": 98765,
                                       "cpu_ticks": 12, "exit_code": None}   # utime 7 + stime 5
    assert procfs.parse_stat("1 (x) S 0")["start_ticks"] is None   # a short line still names its parent
    # field 52, exit_code: a thread's wait status once it ended
    full = "7 (w) Z 1 " + " ".join(["0"] * 47) + " 137"
    assert procfs.parse_stat(full)["exit_code"] == 137 and procfs.parse_stat(full)["state"] == "Z"
    assert procfs.parse_stat("garbage") is None and procfs.parse_stat("1 (x) S") is None
    assert procfs.parse_stat("") is None and procfs.parse_stat(None) is None


def test_proc_stat_of_a_live_process_and_thread_names_its_parent_and_start():
    own = procfs.stat(os.getpid())
    assert own["ppid"] == os.getppid() and own["start_ticks"] > 0 and own["state"] in "RS"
    assert procfs.stat(os.getpid(), threading.get_native_id())["start_ticks"] >= own["start_ticks"]
    assert procfs.alive(os.getpid())
    child = subprocess.Popen(["true"])
    for _ in range(1000):   # until it has exited, not reaped: a zombie is not alive
        if procfs.stat(child.pid)["state"] == "Z":
            break
        time.sleep(0.01)
    assert procfs.stat(child.pid)["state"] == "Z" and not procfs.alive(child.pid)
    child.wait()
    assert procfs.stat(child.pid) is None and not procfs.alive(child.pid)


def _pipe_waiter(own_pid, holders, complete=True, parent=None, ancestors=None):
    from pyhang.model.report import BlockedOn, Report, TargetInfo, ThreadReport
    report = Report(target=TargetInfo(kind="live", pid=own_pid, parent_pid=parent))
    t = ThreadReport(tid=own_pid, gdb_num=1)
    t.blocked_on = BlockedOn(kind=WaitKind.SYSCALL, syscall=SyscallWait(
        name="read", fd=3, object=from_data(FdObject, {"kind": "pipe", "link": "pipe:[7]", "holders_complete": complete,
                                                       "holders": [{"pid": p, "fds": [4],
                                                                    "ancestors": (ancestors or {}).get(p)}
                                                                   for p in holders]})))
    report.threads = [t]
    return report


def test_a_pipe_only_other_processes_hold_is_a_wait_on_those_processes_with_the_tree_to_run():
    facts = syscalls.waits_on_processes(_pipe_waiter(100, [90], parent=90))
    assert to_data(facts) == {"waits": [{"tid": 100, "syscall": "read", "fd": 3, "link": "pipe:[7]", "pids": [90],
                                         "peers": [{"pid": 90, "comm": None, "title": None}]}], "root": 90,
                              "outside": []}
    # a holder that is no parent: the tree of this process's own descendants
    assert syscalls.waits_on_processes(_pipe_waiter(100, [120], parent=90))["root"] == 100


def test_a_holder_whose_parents_lead_to_no_tree_from_here_is_outside_it_and_a_siblings_tree_is_the_parents():
    # a sibling (parent 90's child): the parent's tree holds both; nothing outside it
    sibling = syscalls.waits_on_processes(_pipe_waiter(100, [120], parent=90, ancestors={120: [90, 1]}))
    assert (sibling["root"], sibling["outside"]) == (90, [])
    # a grandchild: this process's tree
    grandchild = syscalls.waits_on_processes(_pipe_waiter(100, [130], parent=90, ancestors={130: [120, 100, 90, 1]}))
    assert (grandchild["root"], grandchild["outside"]) == (100, [])
    # a server init started (redis, a database): in no tree from here
    server = syscalls.waits_on_processes(_pipe_waiter(100, [700], parent=90, ancestors={700: [1]}))
    assert (server["root"], server["outside"]) == (100, [700])
    # parents not known (a core's record of an older pyhang, a process gone): never said to be outside
    assert syscalls.waits_on_processes(_pipe_waiter(100, [700], parent=90))["outside"] == []


def test_a_pipe_this_process_holds_too_or_whose_holders_were_not_all_found_is_no_wait_on_others():
    assert syscalls.waits_on_processes(_pipe_waiter(100, [100, 90])) is None
    assert syscalls.waits_on_processes(_pipe_waiter(100, [90], complete=False)) is None
    assert syscalls.waits_on_processes(_pipe_waiter(100, [])) is None


def _poll_waiter(own_pid, sockets, timeout_ns=None):
    """A thread of `own_pid` in poll on one socket per entry of `sockets`: [(holder pid, title)]."""
    from pyhang.model.report import BlockedOn, Report, TargetInfo, ThreadReport
    report = Report(target=TargetInfo(kind="live", pid=own_pid))
    t = ThreadReport(tid=own_pid + 1, gdb_num=2)
    fds = [{"fd": 4 + i, "direction": "read", "object": from_data(FdObject, {
        "kind": "socket", "link": "socket:[%d]" % (50 + i), "holders_complete": True,
        "holders": [{"pid": pid, "comm": "postgres", "title": title, "fds": [7]}]})} for i, (pid, title) in enumerate(sockets)]
    t.blocked_on = BlockedOn(kind=WaitKind.SYSCALL, syscall=SyscallWait(
        name="poll", watches_fds=True, fds=fds, fds_count=len(fds), timeout={"ns": timeout_ns}))
    report.threads = [t]
    return report


def test_a_poll_with_no_timeout_on_a_socket_to_a_server_is_a_wait_on_the_server_named_with_its_title():
    title = "postgres: postgres postgres 127.0.0.1(56780) UPDATE waiting"
    facts = syscalls.waits_on_processes(_poll_waiter(100, [(300, title)]))
    assert to_data(facts["waits"]) == [{"tid": 101, "syscall": "poll", "fd": 4, "link": "socket:[50]", "pids": [300],
                                        "peers": [{"pid": 300, "comm": "postgres", "title": title}]}]
    from pyhang.model.verdict_facts import WaitsOnProcessFacts
    from pyhang.render.process_verdicts import waits_on_process_text
    assert waits_on_process_text(WaitsOnProcessFacts(**facts), lambda tid: "Thread %d" % tid).startswith(
        "Thread 101 waits in poll on fd 4 (socket:[50]), whose other end only PID 300 (%s) holds" % title)


def test_a_poll_with_a_timeout_or_on_an_fd_this_process_holds_is_no_wait_on_another_process():
    assert syscalls.waits_on_processes(_poll_waiter(100, [(300, None)], timeout_ns=10 ** 9)) is None
    assert syscalls.waits_on_processes(_poll_waiter(100, [(300, None), (100, None)])) is None
    # two servers: one wait on both, no single fd
    (w,) = syscalls.waits_on_processes(_poll_waiter(100, [(300, None), (301, None)]))["waits"]
    assert (w.fd, w.pids) == (None, [300, 301])


def _frames(*names):
    return [NativeFrame(pc=0x1000 + i, function=n, library="/lib/x86_64-linux-gnu/libc.so.6", offset=0)
            for i, n in enumerate(names)]


def test_a_call_resumed_through_restart_syscall_is_read_as_the_call_frame_0_names():
    restart = {"orig_rax": nr("restart_syscall"), "rdi": 0x7000, "rsi": 0x89, "rdx": 0, "r10": 0}
    # a timed futex wait (sem_clockwait, a condvar): frame 0 is a futex wrapper or a lock function
    for name in ("__futex_abstimed_wait_common", "__GI___futex_abstimed_wait_cancelable64", "__new_sem_wait_slow64"):
        got = syscalls.resumed(restart, _frames(name))
        assert got["orig_rax"] == syscalls.FUTEX and got["restarted"] is True, name
        assert syscalls.futex_address(got) == 0x7000
    # a poll: its own wrapper
    poll = dict(restart, rsi=1, rdx=3600000)
    assert syscalls.resumed(poll, _frames("__GI___poll"))["orig_rax"] == nr("poll")
    assert syscalls.resumed(poll, _frames("poll@@GLIBC_2.2.5"))["orig_rax"] == nr("poll")
    # a stripped libc of glibc 2.41+: the call made inside unnamed static functions or the cancellation
    # helpers below the wrapper, which names it
    assert syscalls.resumed(poll, _frames(None, None, "__syscall_cancel", "__poll"))["orig_rax"] == nr("poll")
    # but never a name outside the C library, nor one deeper than the frames a call is made in
    outside = _frames(None) + [NativeFrame(pc=9, function="poll", library="/usr/bin/python3.14", offset=0)]
    assert syscalls.resumed(poll, outside) is poll
    assert syscalls.resumed(poll, _frames(None, None, None, None, "__poll")) is poll
    # THEN no name, or a futex wrapper whose arguments are no wait's, leaves the record as it is
    assert syscalls.resumed(restart, _frames(None, "??")) is restart
    assert syscalls.resumed(dict(restart, rsi=1), _frames("__futex_abstimed_wait_common"))["orig_rax"] == \
        nr("restart_syscall")
    # AND a thread in any other call is untouched
    sleeping = {"orig_rax": nr("clock_nanosleep"), "rdi": 1, "rsi": 1}
    assert syscalls.resumed(sleeping, _frames("clock_nanosleep")) is sleeping


def test_an_unnamed_resumed_futex_wait_needs_its_word_to_hold_the_value_the_wait_expected():
    restart = {"orig_rax": nr("restart_syscall"), "rdi": 0x7000, "rsi": 0x80, "rdx": 2}
    assert syscalls.futex_wait_candidate(restart) == 0x7000
    assert syscalls.resumed_futex(restart, 2)["orig_rax"] == syscalls.FUTEX
    assert syscalls.resumed_futex(restart, 3) is restart and syscalls.resumed_futex(restart, None) is restart
    # a resumed clock_nanosleep(CLOCK_MONOTONIC, ...) or a wake op is never a candidate
    assert syscalls.futex_wait_candidate(dict(restart, rdi=1)) is None
    assert syscalls.futex_wait_candidate(dict(restart, rsi=1)) is None
    assert syscalls.futex_wait_candidate({"orig_rax": syscalls.FUTEX, "rdi": 0x7000, "rsi": 0}) is None


def test_a_damaged_proc_locks_line_is_counted_and_the_readable_holders_still_named():
    dev = os.makedev(0xfd, 1)
    text = ("1: FLOCK  ADVISORY  WRITE 4242 fd:01:77 0 EOF\n"
            "2: POSIX  ADVISORY  READ 17 fd:01:77 0 EOF\n"
            "3: garbage\n"
            "4: FLOCK  ADVISORY  WRITE 99 zz:01:77 0 EOF\n"
            "5: -> FLOCK  ADVISORY  WRITE 555 fd:01:77 0 EOF\n"
            "6: OFDLCK ADVISORY  WRITE -1 fd:01:77 0 EOF\n"
            "7: FLOCK  ADVISORY  WRITE 8 fd:01:78 0 EOF\n")
    holders, unreadable = procfs.parse_locks(text, dev, 77)
    assert [h["pid"] for h in holders] == [4242, 17, -1] and unreadable == 2   # a waiter (->) holds nothing
    assert procfs.parse_locks("", dev, 77) == ([], 0)
    files = {4: {"kind": "file", "path": "/tmp/l", "pid": 10, "lock_holders": holders, "locks_unreadable": 2}}
    b = syscalls.syscall_wait(thread("flock", 4, 2), files=fd_objects(files))
    assert line(b).endswith("; locked by PID 4242, PID 17, an open file description (no PID recorded); 2 lines of "
                            "/proc/locks could not be read (a holder may be missing)")


def test_a_lock_on_a_deleted_file_still_names_its_holder(tmp_path):
    path = str(tmp_path / "gone.lock")
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\n"
                               "f = open(%r, 'w'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True)\n"
                               "time.sleep(60)" % path], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        fd = os.open(path, os.O_RDONLY)
        os.unlink(path)   # the file is gone from its directory; the fds and the lock remain
        obj = fd_holders.fd_object(os.getpid(), fd)
        assert obj["path"].endswith("(deleted)") and [h["pid"] for h in obj["lock_holders"]] == [holder.pid]
        os.close(fd)
    finally:
        holder.kill()
        holder.wait()

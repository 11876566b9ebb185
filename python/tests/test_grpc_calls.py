"""A blocking gRPC client call is a wait on its server (pyhang.analysis.grpc_calls), not the idle timed poll
its native wait looks like; a server thread running a handler serves a request in flight, never idle:
synthetic threads and fds, no gRPC."""
from pyhang.analysis import account, grpc_calls, idle
from pyhang.model.files import FdObject
from pyhang.model.kinds import AccountReason, ThreadState, WaitKind
from pyhang.model.record import from_data
from pyhang.model.report import BlockedOn, PythonFrame, Report, TargetInfo, ThreadLook, ThreadReport
from pyhang.model.snapshot import ThreadSnapshot
from pyhang.model.waits import SyscallWait

OWN, SERVER = 100, 200
CALL = {"deadline": None,
        "frame": {"function": "_UnaryUnaryMultiCallable._blocking", "file": "/usr/lib/grpc/_channel.py", "line": 933}}


def _files(holders=({"pid": SERVER, "comm": "python3", "title": "python3 server.py", "fds": [7]},), complete=True,
           state="ESTABLISHED"):
    sock = {"kind": "socket", "link": "socket:[9]", "holders_complete": complete,
            "socket": {"protocol": "tcp", "local": "127.0.0.1:41000", "peer": "127.0.0.1:50051", "state": state}}
    if holders is not None:
        sock["holders"] = [dict(h, threads=[]) for h in holders]
    return {3: from_data(FdObject, {"kind": "anon", "link": "anon_inode:[eventpoll]", "epoll": [4, 5]}),
            4: from_data(FdObject, {"kind": "anon", "link": "anon_inode:[eventfd]"}),
            5: from_data(FdObject, sock)}


def _poll(files, timeout_ns=200000000):
    return BlockedOn(kind=WaitKind.SYSCALL, syscall=SyscallWait(name="epoll_wait", fd=3, object=files[3],
                                                                timeout={"ns": timeout_ns}, fd_table=True))


def _caller(call=CALL):
    return ThreadSnapshot(num=2, tid=101, grpc_call=dict(call))


def test_a_call_without_deadline_polling_grpcs_epoll_waits_on_its_channels_connection():
    files = _files()
    b = grpc_calls.call_wait(_poll(files), _caller(), files)
    assert b.kind == WaitKind.GRPC_CALL and b.owners == [] and b.confidence == "likely"
    assert b.grpc.native_wait == "epoll_wait" and b.grpc.frame["line"] == 933
    (s,) = b.grpc.sockets   # the eventfd the epoll also watches is no connection
    assert (s["fd"], s["peer"], s["pids"]) == (5, "127.0.0.1:50051", [SERVER])


def test_a_call_with_a_deadline_ends_by_itself_and_stays_its_timed_poll():
    files = _files()
    b = _poll(files)
    assert grpc_calls.call_wait(b, _caller(dict(CALL, deadline="5")), files) is b


def test_a_thread_in_no_grpc_call_and_a_wait_with_an_owner_are_left_as_they_are():
    files = _files()
    b = _poll(files)
    assert grpc_calls.call_wait(b, ThreadSnapshot(num=2, tid=101), files) is b
    mutex = BlockedOn(kind=WaitKind.MUTEX, owners=[102])
    assert grpc_calls.call_wait(mutex, _caller(), files) is mutex


def _report(b):
    return Report(target=TargetInfo(kind="live", pid=OWN), threads=[ThreadReport(tid=101, gdb_num=2, blocked_on=b)])


def test_a_call_whose_connection_only_another_process_holds_is_a_wait_on_that_process():
    files = _files()
    (w,) = grpc_calls.process_waits(_report(grpc_calls.call_wait(_poll(files), _caller(), files)))
    assert (w.tid, w.fd, w.pids, w.syscall) == (101, 5, [SERVER], "epoll_wait")
    assert w.grpc.targets == ["127.0.0.1:50051"]
    assert [p.pid for p in w.peers] == [SERVER]


def _class(files, b=None):
    b = grpc_calls.call_wait(b or _poll(files), _caller(), files)
    return grpc_calls.account_class(b, OWN)


def test_no_call_is_ever_idle_its_class_says_why_its_server_is_not_named():
    # a server on another machine (no holder here), its own process, a core without fds, nothing found
    assert _class(_files(holders=()))[:2] == (ThreadState.ELSEWHERE, AccountReason.PEER)
    assert _class(_files(holders=({"pid": OWN, "comm": "me", "title": "me", "fds": [8]},)))[:2] == \
        (ThreadState.UNACCOUNTED, AccountReason.OWN_PROCESS)
    assert _class(_files(holders=None, complete=False))[:2] == (ThreadState.UNACCOUNTED, AccountReason.HOLDERS_UNKNOWN)
    b = grpc_calls.call_wait(BlockedOn(kind=WaitKind.CONDVAR), _caller(), None)
    assert b.kind == WaitKind.GRPC_CALL and grpc_calls.account_class(b, OWN)[:2] == \
        (ThreadState.UNACCOUNTED, AccountReason.NO_FD_TABLE)
    assert _class(_files(state="LISTEN"))[:2] == (ThreadState.UNACCOUNTED, AccountReason.NOT_MODELED)


def test_the_account_gives_a_call_its_class_not_the_idle_of_its_timed_poll():
    files = _files(holders=())
    report = _report(grpc_calls.call_wait(_poll(files), _caller(), files))
    account.analyse(report)
    assert report.threads[0].account.state == ThreadState.ELSEWHERE
    assert [v.kind for v in report.verdicts] == ["unaccounted"]


def _event_waiter(tid, frames):
    return ThreadReport(tid=tid, gdb_num=tid, blocked_on=BlockedOn(kind=WaitKind.PY_EVENT, address=0x7000),
                        python_frames=[PythonFrame(f, path, 1) for f, path in frames])


def test_a_server_thread_running_a_grpc_handler_is_never_idle_one_between_requests_is():
    handler = _event_waiter(3, [("Event.wait", "/usr/lib/python3.11/threading.py"), ("hang", "/srv/app.py"),
                                ("_unary_response_in_pool", "/usr/lib/python3/dist-packages/grpc/_server.py")])
    between = _event_waiter(4, [("Event.wait", "/usr/lib/python3.11/threading.py"), ("run", "/srv/app.py")])
    report = Report(target=TargetInfo(kind="live", pid=OWN), threads=[handler, between])
    assert [w.tid for w in idle.idle_waits(report, [])] == [4]


def test_a_second_look_at_a_waiting_call_takes_its_periodic_wake_for_no_progress_its_frames_moving_for_progress():
    files = _files()
    call = ThreadReport(tid=101, gdb_num=2, blocked_on=grpc_calls.call_wait(_poll(files), _caller(), files))
    woke = ThreadLook(tid=101, cpu_ticks=1, voluntary=3, involuntary=0, syscall_changed=True, stack_moved=False)
    assert grpc_calls.progress(call, woke.moved()) == []
    assert grpc_calls.progress(call, ThreadLook(tid=101, voluntary=3, stack_moved=True).moved()) == ["stack"]
    other = ThreadReport(tid=102, gdb_num=3, blocked_on=_poll(files))
    assert grpc_calls.progress(other, woke.moved()) == ["cpu", "switches", "syscall"]


def test_a_futures_result_and_a_blocking_call_are_found_by_their_frames_a_server_waiting_for_termination_is_not():
    channel, common = "/usr/lib/python3/dist-packages/grpc/_channel.py", "/usr/lib/python3/dist-packages/grpc/_common.py"
    assert grpc_calls.call_frames([("_UnaryUnaryMultiCallable._blocking", channel, 933)]) == (0, None)
    future = [("Condition.wait", "/usr/lib/python3.11/threading.py", 324), ("_wait_once", common, 112),
              ("wait", common, 150), ("_MultiThreadedRendezvous.result", channel, 733)]
    assert grpc_calls.call_frames(future) == (3, 2)
    serving = future[:3] + [("_Server.wait_for_termination", "/usr/lib/python3/dist-packages/grpc/_server.py", 1)]
    assert grpc_calls.call_frames(serving) is None

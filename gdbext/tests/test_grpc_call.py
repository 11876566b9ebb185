"""A gRPC client call waiting on its server, against a real gRPC server in another process (Debian 12's
python3-grpcio 1.51 on its 3.11, and Debian unstable's on its 3.14 in a root file system of its own,
containers.LIBRARY_ROOTS: sid-services, whose Abseil is a library of its own and whose glibc names no
start_thread; testdata/scenarios/grpc_call.py).

A unary call with no deadline to a server whose handler never returns: the calling thread polls gRPC's
completion queue (a timed epoll_wait, which alone would read as idle).  Its Python frame (_blocking in
grpc/_channel.py, no timeout) makes it a `grpc-call` wait: on the channel's connection (a socket the epoll
instance watches) whose other end the server process holds, a waits-on-process wait, exit 4, never an
all-clear; so is a future's result() with no timeout (a Condition.wait of 100 ms at a time), whose
connection is not named.  From a core gdb wrote (no fd table) the connection is unknown: exit 4.  The server, its handler
waiting for ever inside that request, is never an all-clear either (a handler serves a request in flight:
never idle); a gRPC server idling for requests (no call made) is healthy: exit 0.  As a tree over the
client: the call's wait on the server, a process outside the tree, named with its title (exit 4); gRPC's
own idle threads no unaccounted waits."""
import os

import pytest

import harness


@pytest.fixture(scope="module", params=[pytest.param(path, id=name) for name, path in harness.services_interpreters()])
def python(request):
    return request.param


def _server(python):
    """The server scenario, not started: it records the call it gets in its own directory."""
    s = harness.python_scenario(python, "grpc_call.py", "server")
    s.env["PYHANG_GRPC_ARRIVED"] = os.path.join(s.tmp, "arrived.json")
    return s


@pytest.fixture(scope="module")
def server(python):
    with _server(python) as s:
        yield s


@pytest.fixture(scope="module")
def client(python, server):
    with harness.python_scenario(python, "grpc_call.py", "client", server.truth["port"],
                                 env={"PYHANG_GRPC_ARRIVED": server.env["PYHANG_GRPC_ARRIVED"]}) as s:
        yield s


def _role(s, role):
    return next(t for t in s.truth["threads"] if t["role"] == role)


def _local_port(pid, fd):
    """The local port of TCP socket `fd` of `pid` (IPv4 or IPv6), as /proc says it."""
    inode = int(os.readlink("/proc/%d/fd/%d" % (pid, fd))[len("socket:["):-1])
    rows = []
    for table in ("tcp", "tcp6"):
        with open("/proc/%d/net/%s" % (pid, table)) as f:
            rows += [r.split() for r in f.read().splitlines()[1:] if int(r.split()[9]) == inode]
    (row,) = rows
    return int(row[1].rsplit(":", 1)[1], 16)


def _thread(doc, tid):
    return next(t for t in doc["threads"] if t["tid"] == tid)


def test_a_call_without_deadline_to_a_server_that_never_answers_waits_on_the_server_process_exit_4(client, server):
    # the premise, as the server saw it: the call arrived in its handler, from the client's socket
    arrived = client.truth["arrived"]
    assert arrived["pid"] == server.pid and arrived["peer"].startswith("ipv4:127.0.0.1:")
    status, doc = harness.report_doc("-p", client.pid, look=True)   # with the second look
    call = _role(client, "call")
    b = _thread(doc, call["tid"])["blocked_on"]
    # THEN the calling thread waits in the call, not in an idle poll
    assert b["kind"] == "grpc-call" and b["confidence"] == "likely" and b["owners"] == []
    assert "gRPC call with no deadline" in b["detail"] and "_blocking (grpc/_channel.py)" in b["evidence"]
    # AND on the server: the channel's connection, whose other end the server process holds
    (w,) = [v for v in doc["verdicts"] if v["kind"] == "waits-on-process"]
    (wait,) = w["facts"]["waits"]
    assert wait["tid"] == call["tid"] and wait["pids"] == [server.pid] and wait["syscall"] == "epoll_wait"
    assert wait["grpc"] == {"targets": ["127.0.0.1:%d" % server.truth["port"]]}
    assert [p["pid"] for p in wait["peers"]] == [server.pid] and "grpc_call.py server" in wait["peers"][0]["title"]
    assert "127.0.0.1:%d" % server.truth["port"] in w["text"]
    # AND that connection is the one the call came from, as the server saw it
    assert _local_port(client.pid, wait["fd"]) == int(arrived["peer"].rsplit(":", 1)[1])
    account = _thread(doc, call["tid"])["account"]
    assert account["state"] == "elsewhere" and account["pids"] == [server.pid]
    # AND the second look takes the call's poll waking every 200 ms for what it is: no progress
    assert _thread(doc, call["tid"])["moved"] == [] and "moved" not in w["facts"]
    assert doc["deadlocks"] == [] and status == 4 and doc["headline"].startswith("Waits on PID %d" % server.pid)


def test_a_futures_result_without_timeout_is_a_wait_on_the_call_never_its_timed_condition_wait(python):
    # the call made with .future(): result() waits on the call's Condition, 100 ms at a time
    with _server(python) as srv, harness.python_scenario(python, "grpc_call.py", "client-future", srv.truth["port"],
                                                   env={"PYHANG_GRPC_ARRIVED": srv.env["PYHANG_GRPC_ARRIVED"]}) as c:
        assert c.truth["arrived"]["pid"] == srv.pid
        status, doc = harness.report_doc("--once", "-p", c.pid)
        call = _thread(doc, _role(c, "call")["tid"])
        assert call["blocked_on"]["kind"] == "grpc-call" and "grpc/_common.py's wait" in call["blocked_on"]["evidence"]
        # (its own thread polls nothing: the channel's connection is gRPC's channel thread's, not named here)
        assert call["account"]["state"] == "unaccounted" and call["account"]["reason"] == "not-modeled"
        assert status == 4 and doc["headline"] != "No deadlock found."


def test_from_a_core_without_an_fd_table_the_call_is_unaccounted_never_an_all_clear(python, client):
    core = harness.gcore(client.pid, client.tmp)
    status, doc = harness.report_doc(*harness.core_options(python), core, python)
    call = _thread(doc, _role(client, "call")["tid"])
    assert call["blocked_on"]["kind"] == "grpc-call"
    assert call["account"]["state"] == "unaccounted" and call["account"]["reason"] == "no-fd-table"
    # (and only the call: gRPC's own threads, parked in Abseil's semaphore below gRPC's frames, are idle)
    assert [t["tid"] for t in doc["threads"] if t["account"]["state"] == "unaccounted"] == [call["tid"]]
    assert status == 4 and doc["headline"] != "No deadlock found."


def test_the_tree_over_the_client_names_the_server_as_a_process_outside_it_no_other_wait_unaccounted(client, server):
    status, doc = harness.tree_doc(client.pid)
    call = _role(client, "call")
    # THEN the call's wait is the one outside the tree: on the server process, named with its title
    (w,) = doc["outside"]
    assert (w["pid"], w["tid"], w["pids"]) == (client.pid, call["tid"], [server.pid])
    assert "grpc_call.py server" in w["peers"][0]["title"]
    # AND nothing else is unaccounted (gRPC's idle threads), no invented cycle or stall: exit 4
    assert doc["unaccounted"] == [{"pid": client.pid, "tid": call["tid"]}]
    assert doc["deadlocks"] == [] and doc["stalls"] == []
    assert status == 4 and doc["headline"].startswith(
        "Not accounted for: waits on a process outside the tree, which pyhang does not look into: PID %d LWP %d on "
        "PID %d" % (client.pid, call["tid"], server.pid))


def test_a_server_whose_handler_waits_for_ever_inside_a_request_is_never_an_all_clear(client, server):
    # (the client fixture made the call: the server's handler waits on an Event nothing sets)
    status, doc = harness.report_doc("--once", "-p", server.pid)
    handler = _thread(doc, client.truth["arrived"]["tid"])
    assert handler["blocked_on"]["kind"] == "py-event" and handler["account"]["state"] != "idle"
    assert [v for v in doc["verdicts"] if v["kind"] == "idle" and handler["tid"] in v["threads"]] == []
    assert status != 0 and doc["headline"] != "No deadlock found."


def test_a_grpc_server_idling_for_requests_is_healthy_exit_0(python):
    with _server(python) as s:
        status, doc = harness.report_doc("--once", "-p", s.pid)
        assert not os.path.exists(s.env["PYHANG_GRPC_ARRIVED"])   # no call was made to it
        assert [t["tid"] for t in doc["threads"] if t["account"]["state"] in ("elsewhere", "unaccounted", "hung")] \
            == [] and doc["deadlocks"] == []
        assert status == 0 and doc["headline"] == "No deadlock found."

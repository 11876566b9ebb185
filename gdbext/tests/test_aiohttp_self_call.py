"""A real aiohttp server (Debian's python3-aiohttp) whose handler calls the
server itself through `requests` on the event loop's thread: the loop is
blocked in the handler's line, reading a loopback TCP socket whose peer
waits in the backlog of the process's own listening socket, which no other
process holds.  pyhang says the loop is blocked at the program's own call
(not socket.py), names the peer as this process's own listener (never "no
process"), and the client thread's peer as a socket this process holds,
live and from a core (which has no fd table: the waits are said, their
peers not followed).  Debian's 3.11 and pyenv's 3.12 (Debian's packages
through PYTHONPATH, their C extensions off)."""
import json
import os

import pytest

import harness

AIOHTTP = "/usr/lib/python3/dist-packages/aiohttp"
pytestmark = pytest.mark.skipif(not os.path.isdir(AIOHTTP), reason="python3-aiohttp is not installed")

# aiohttp and its dependencies fall back to pure Python with these (their C extensions are built for 3.11)
PURE = {"AIOHTTP_NO_EXTENSIONS": "1", "MULTIDICT_NO_EXTENSIONS": "1", "YARL_NO_EXTENSIONS": "1",
        "FROZENLIST_NO_EXTENSIONS": "1", "PYTHONPATH": "/usr/lib/python3/dist-packages"}


def params():
    found = dict(harness.interpreters(today=False))
    names = ["debian-3.11"] + [n for n in sorted(found) if n.startswith("pyenv-3.12")]
    return [pytest.param(found[n], id=n) for n in names if n in found]


@pytest.fixture(scope="module", params=params())
def server(request):
    exe, env = harness.stripped_interpreter(request.param)
    if exe != "/usr/bin/python3.11":
        env = dict(env or {}, **PURE)
    s = harness.python_scenario(exe, "aiohttp_self_call.py", env=env)
    s.start()
    s.exe = exe
    yield s
    s.stop()


def reports(s):
    return harness.cli_live_and_core_reports(s, s.exe)


def test_a_handler_calling_its_own_server_is_a_blocked_loop_at_the_programs_line(server):
    t = server.truth
    loop = harness.role_tid(server, "loop")
    for where, doc in reports(server):
        (v,) = [v for v in doc["verdicts"] if v["kind"] == "asyncio-loop-blocked"]
        # THEN the verdict points at the handler's own call, not at socket.py below it
        assert v["threads"] == [loop] and doc["exit_status"] == 5, where
        assert 'aiohttp_self_call.py", line %d, in report' % t["call_line"] in v["text"], (where, v["text"])
        assert doc["headline"].startswith("Hung without a deadlock: an asyncio event loop is blocked"), where
        b = {th["tid"]: th for th in doc["threads"]}[loop]["blocked_on"]
        assert (b["kind"], b["syscall"]["name"]) == ("syscall", "recvfrom"), (where, b)


def test_the_loops_tcp_peer_is_its_own_listeners_backlog_never_no_process(server):
    t = server.truth
    loop, client = harness.role_tid(server, "loop"), harness.role_tid(server, "client")
    status, out, err = harness.pyhang_cli("report", "--json", "-p", server.pid)
    doc = harness.validated_report(json.loads(out))
    threads = {th["tid"]: th for th in doc["threads"]}
    b = threads[loop]["blocked_on"]
    assert b["syscall"]["object"]["link"] in t["handler_links"], b
    # the peer waits in the backlog of the process's own listening socket: said, and never "no process"
    assert "not yet accepted by this process's own listening socket" in b["detail"], b["detail"]
    assert "no other process can accept it" in b["detail"] and "held by no process" not in b["detail"]
    # the client's peer is the server's accepted socket, in this same process
    assert "its peer is held only by this process" in threads[client]["blocked_on"]["detail"]
    # AND from a core, which records no fd table, the peers are not followed, and not said to be nobody's
    _, core_doc = list(reports(server))[1]
    for tid in (loop, client):
        detail = {th["tid"]: th for th in core_doc["threads"]}[tid]["blocked_on"]["detail"]
        assert "no process" not in detail and "recvfrom" in detail, detail

"""Scenario (a service on gRPC, Debian's python3-grpcio; no .proto: generic
handlers and raw bytes): a unary call with no deadline to a server in
another process that never answers.

`server`: a grpc.server (a ThreadPoolExecutor of 2 workers, one insecure
port on 127.0.0.1) whose method /pyhang.Hang/Hang blocks for ever in its
handler (it waits on an Event nothing sets) once it has recorded the call's
peer (the client's address, `context.peer()`) in $PYHANG_GRPC_ARRIVED when
that is set.  The main thread waits for the server's termination: with no
call made, the process only waits for requests (healthy).

`client PORT`: a thread (role call) calls /pyhang.Hang/Hang on
127.0.0.1:PORT with no timeout and waits for the reply for ever; gRPC's
completion queue polls in that thread (epoll_wait, waking every 200 ms to
look for a KeyboardInterrupt).  `client-future PORT`: the same call made
with .future(), whose result() (no timeout) waits in grpc/_common.py's
wait on the call's Condition, 100 ms at a time, while gRPC's channel
thread polls.  The main thread joins it.  Ready once the
server's handler recorded the call: the hang happened.

Truth: each thread's TID and role, the port; the client's also the server's
record of the call (`arrived`: the peer the server saw, the handler's PID).  Only where python3-grpcio exists (Debian packages it for
3.11 only in bookworm)."""
import json
import os
import sys
import threading
import time

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import grpc_common  # noqa: E402

TRUTH = Truth()
METHOD = "/pyhang.Hang/Hang"
NEVER = threading.Event()


def hang(request, context):
    path = os.environ.get("PYHANG_GRPC_ARRIVED")
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump({"peer": context.peer(), "pid": os.getpid(), "tid": gettid()}, f)
        os.rename(path + ".tmp", path)
    NEVER.wait()
    return request


def server():
    set_os_thread_name("grpc-server")
    s, port = grpc_common.start_server("pyhang.Hang", "Hang", hang, 2)
    TRUTH.thread(tid=gettid(), name="grpc-server", role="main", parked=False)
    TRUTH.write_and_signal_ready(port=port)
    s.wait_for_termination()


def call(port, result):
    set_os_thread_name("grpc-call")
    TRUTH.thread(tid=gettid(), name="grpc-call", role="call", parked=False)
    channel = grpc.insecure_channel("127.0.0.1:%d" % port)
    result.append(channel.unary_unary(METHOD)(b"ping"))   # no timeout: waits for ever


def call_future(port, result):
    set_os_thread_name("grpc-call")
    TRUTH.thread(tid=gettid(), name="grpc-call", role="call", parked=False)
    channel = grpc.insecure_channel("127.0.0.1:%d" % port)
    result.append(channel.unary_unary(METHOD).future(b"ping").result())   # no timeout either


def client(port, target=call):
    set_os_thread_name("grpc-client")
    TRUTH.thread(tid=gettid(), name="grpc-client", role="main", parked_in="futex")
    arrived = os.environ["PYHANG_GRPC_ARRIVED"]
    t = threading.Thread(target=target, args=(port, []), daemon=True)
    t.start()
    while not os.path.exists(arrived):
        time.sleep(0.01)
    with open(arrived) as f:
        record = json.load(f)
    TRUTH.write_and_signal_ready(port=port, arrived=record)
    t.join()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server()
    else:
        client(int(sys.argv[2]), call_future if sys.argv[1] == "client-future" else call)

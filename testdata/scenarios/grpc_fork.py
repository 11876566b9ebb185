"""Scenario (a service on gRPC, Debian's python3-grpcio): a gRPC server
process that forks a multiprocessing worker whose RPC never completes.

The parent starts a grpc.server (a ThreadPoolExecutor of 4 workers, one
insecure port on 127.0.0.1), makes one RPC to itself through a channel (so
that gRPC's client side runs too: its pollers, its executor threads), then
forks a worker with multiprocessing's fork context and joins it.  The
worker opens a channel to the parent's server and calls it with no
timeout: gRPC was forked without its fork handlers
(GRPC_ENABLE_FORK_SUPPORT is off by default), the threads that would poll
the child's completion queue stayed in the parent, and the call never
completes.  The parent's gRPC threads all wait for work: none of them
holds anything any other waits for.

Truth: the parent's main thread (role main, in Process.join), the worker's
PID and its thread (role rpc, in the call), and the port.  Only where
python3-grpcio exists (Debian packages it for 3.11 only in bookworm)."""
import multiprocessing
import os
import sys
import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402
import fork_common  # noqa: E402
import grpc_common  # noqa: E402

TRUTH = Truth()
RECORD = os.environ["PYHANG_TRUTH"] + ".worker"


def echo(request, context):
    return request


def worker(port):
    set_os_thread_name("grpc-worker")
    channel = grpc.insecure_channel("127.0.0.1:%d" % port)
    call = channel.unary_unary("/pyhang.Echo/Echo")
    fork_common.record(RECORD, pid=os.getpid(), tid=gettid())
    call(b"from the worker")   # never completes
    os._exit(0)


def main():
    set_os_thread_name("grpc-parent")
    server, port = grpc_common.start_server("pyhang.Echo", "Echo", echo, 4)
    channel = grpc.insecure_channel("127.0.0.1:%d" % port)
    assert channel.unary_unary("/pyhang.Echo/Echo")(b"warm") == b"warm"
    TRUTH.thread(tid=gettid(), name="grpc-parent", role="main", parked=False)
    p = multiprocessing.get_context("fork").Process(target=worker, args=(port,), name="grpc-worker")
    p.start()
    (rec,) = fork_common.wait_records([RECORD])
    TRUTH.write_and_signal_ready(worker=rec, port=port)
    p.join()


if __name__ == "__main__":
    main()

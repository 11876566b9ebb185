"""What the gRPC scenarios share (grpc_fork.py, grpc_call.py): a started grpc.server with one unary method
of raw bytes (a generic handler: no .proto), on an insecure port of 127.0.0.1."""
from concurrent import futures

import grpc


def start_server(service, method, handler, workers):
    """(server, port): a started grpc.server of `workers` threads serving /service/method with `handler`."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
        service, {method: grpc.unary_unary_rpc_method_handler(handler)})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port

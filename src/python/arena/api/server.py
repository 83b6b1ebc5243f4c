"""The gRPC server: `create_server` binds (port 0 in tests) and `serve` runs until a signal.

With `credentials` it serves TLS; without, it listens only on loopback unless `insecure_listen`
(api/transport.py): bearer tokens never cross a network in plaintext by accident.
"""

from __future__ import annotations

import signal
import threading
from concurrent import futures

import grpc

from arena.api.limits import CallGate, CallLimits
from arena.api.service import Gatekeeper, add_runner_service
from arena.api.transport import require_safe_listen
from arena.api.wire import MAX_RECEIVE_BYTES, MAX_SEND_BYTES
from arena.runner.auth import Tokens
from arena.runner.runner import Runner

# Each Evaluate stream holds a thread while it waits for its job; calls beyond this are
# refused with RESOURCE_EXHAUSTED rather than left waiting for a thread.
MAX_WORKERS = 128
STOP_GRACE_S = 5.0


def create_server(
    address: str,
    runner: Runner,
    tokens: Tokens,
    max_workers: int = MAX_WORKERS,
    *,
    credentials: grpc.ServerCredentials | None = None,
    insecure_listen: bool = False,
    limits: CallLimits | None = None,
) -> tuple[grpc.Server, int]:
    """A server for `runner` bound to `address` ("host:port"; port 0 picks one), not yet started:
    TLS with `credentials`; plaintext only on loopback, or anywhere with `insecure_listen`."""
    require_safe_listen(address, tls=credentials is not None, insecure_listen=insecure_listen)
    gate = CallGate(limits or CallLimits())
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="arena-rpc"),
        interceptors=(Gatekeeper(tokens, gate),),  # token and rate before a request is parsed
        maximum_concurrent_rpcs=max_workers,
        options=[
            ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
            ("grpc.max_send_message_length", MAX_SEND_BYTES),
        ],
    )
    add_runner_service(server, runner, tokens, gate)
    if credentials is not None:
        port = server.add_secure_port(address, credentials)
    else:
        port = server.add_insecure_port(address)
    if not port:
        raise OSError(f"cannot listen on {address}")
    return server, port


def serve(server: grpc.Server) -> None:
    """Start `server` and block until SIGINT or SIGTERM (or another thread stops it)."""
    server.start()
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, lambda *_: server.stop(STOP_GRACE_S))
    server.wait_for_termination()

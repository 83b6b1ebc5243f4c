"""A gRPC channel to a REAPI server that sends a bearer token with every call, in TLS when given
the CA that signed the server's certificate.

gRPC's own call credentials travel only over TLS (or a local socket), and a pool may listen in
plaintext on a private network, so the token goes in as metadata through an interceptor, either
way. The token is the pool's (arena/pool/tokens.py); "" sends none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from arena.pem import read_pem


def open_channel(endpoint: str, token: str = "", ca: Path | None = None) -> Any:
    import grpc

    if ca is None:
        channel = grpc.insecure_channel(endpoint)
    else:
        trusted = read_pem(ca, "pool's TLS CA certificate")
        channel = grpc.secure_channel(endpoint, grpc.ssl_channel_credentials(root_certificates=trusted))
    if not token:
        return channel
    return grpc.intercept_channel(channel, _bearer(token))


def _bearer(token: str) -> Any:
    import grpc

    header = ("authorization", f"Bearer {token}")

    class Details(grpc.ClientCallDetails):  # type: ignore[misc]
        def __init__(self, details: Any) -> None:
            self.method = details.method
            self.timeout = details.timeout
            self.metadata = [*(details.metadata or ()), header]
            self.credentials = details.credentials
            self.wait_for_ready = details.wait_for_ready
            self.compression = getattr(details, "compression", None)

    class Bearer(
        grpc.UnaryUnaryClientInterceptor,  # type: ignore[misc]
        grpc.UnaryStreamClientInterceptor,  # type: ignore[misc]
        grpc.StreamUnaryClientInterceptor,  # type: ignore[misc]
        grpc.StreamStreamClientInterceptor,  # type: ignore[misc]
    ):
        def _intercept(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
            return continuation(Details(details), request)

        intercept_unary_unary = intercept_unary_stream = _intercept
        intercept_stream_unary = intercept_stream_stream = _intercept

    return Bearer()

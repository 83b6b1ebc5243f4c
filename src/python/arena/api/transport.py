"""How the runner and its clients reach each other: TLS credentials, and the rule that nothing
(bearer tokens least of all) crosses a network in plaintext unless the operator says so.

Server and client both use it; it imports no server code.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import grpc

from arena.errors import ArenaError
from arena.pem import read_pem

# Addresses that never leave this host: gRPC's unix sockets and the loopback names.
LOCAL_SCHEMES = ("unix:", "unix-abstract:")
LOOPBACK_NAMES = frozenset({"localhost"})
INSECURE_LISTEN_FLAG = "--insecure-listen"
INSECURE_CONNECT_FLAG = "--insecure-connect"


class InsecureTransport(ArenaError):
    """Plaintext beyond loopback was asked for without the operator's explicit flag."""


def address_host(address: str) -> str:
    """The host of a gRPC address: "h:1" -> "h", "[::1]:1" -> "::1", ":1" -> "" (every interface)."""
    if address.startswith("["):
        host, bracket, _ = address[1:].partition("]")
        return host if bracket else address
    host, colon, port = address.rpartition(":")
    return host if colon and port.isdigit() else address


def is_loopback(address: str) -> bool:
    """`address` reaches only this host: 127.0.0.0/8, ::1, localhost or a unix socket.
    Anything else (0.0.0.0, [::], ":port", other names, which could resolve anywhere) is not."""
    if address.startswith(LOCAL_SCHEMES):
        return True
    host = address_host(address).lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_safe_listen(address: str, tls: bool, insecure_listen: bool) -> None:
    """Refuse to serve bearer tokens in plaintext on anything but loopback without the flag."""
    if tls or insecure_listen or is_loopback(address):
        return
    raise InsecureTransport(
        f"refusing to listen on {address} without TLS: bearer tokens would cross the network in "
        f"plaintext. Give --tls-cert FILE and --tls-key FILE, listen on 127.0.0.1, or pass "
        f"{INSECURE_LISTEN_FLAG} if this network is private and you accept that risk"
    )


def require_safe_connect(address: str, tls: bool, insecure_connect: bool) -> None:
    """The client's half of the same rule: no plaintext call leaves this host without the flag."""
    if tls or insecure_connect or is_loopback(address):
        return
    raise InsecureTransport(
        f"refusing to call the runner at {address} in plaintext: the bearer token would cross the "
        f"network unencrypted. Give --tls-ca FILE (or ARENA_TLS_CA) for a runner serving TLS, or pass "
        f"{INSECURE_CONNECT_FLAG} (or ARENA_INSECURE_CONNECT=1) if this network is private"
    )


def server_credentials(cert: Path, key: Path) -> grpc.ServerCredentials:
    """TLS for the server from a PEM certificate chain and its private key."""
    return grpc.ssl_server_credentials([(read_pem(key, "TLS private key"), read_pem(cert, "TLS certificate"))])


def channel_credentials(ca: Path) -> grpc.ChannelCredentials:
    """TLS for a client that trusts exactly the certificates in `ca` (PEM)."""
    return grpc.ssl_channel_credentials(root_certificates=read_pem(ca, "TLS CA certificate"))

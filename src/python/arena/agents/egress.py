"""The agent's only way out of its network namespace: a proxy outside the sandbox, on a Unix socket.

An agent's sandbox has a network of its own with nothing in it but loopback (bubblewrap's
--unshare-net). Inside, arena.agents.netbridge listens on loopback and carries every connection
to this proxy's socket, the one file of the outside it may open. The proxy reads the request's
first line, an HTTP CONNECT or an absolute-form request (`POST http://host:port/path`), and opens
the connection only to:
- the destinations the run names (its runner, its model endpoint), wherever they are;
- any other host on port 443 whose addresses are all public (`is_global`), connected to the very
  address checked (no second lookup for a name to change under it), unless the network is closed
  (no web pages, packages or published kernels: the model and the runner alone).
So an agent reaches its model and its runner, and the public internet over TLS, but never the
machine's other services (a pool's BuildGrid or PostgreSQL, another runner's port), its LAN or
the cloud's metadata address (169.254.169.254). Each refusal is kept for the run's log.
"""

from __future__ import annotations

import ipaddress
import socket
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable
from urllib.parse import urlsplit

PUBLIC_PORT = 443
PROXY_PORT = 3128  # where the agent finds its HTTP(S) proxy on its own loopback, unless a forward is there
HEADER_LIMIT = 16 << 10
CONNECTIONS = 64  # open at once: a run that opens more is refused the rest, not the machine's threads
HEADER_TIMEOUT_S = 30.0  # a connection that never says where it goes is closed
_COPY_BYTES = 1 << 16


def destination(address: str, default_port: int = PUBLIC_PORT) -> tuple[str, int] | None:
    """(host, port) of a runner address (`host:port`) or an endpoint URL; None for "" or a Unix socket."""
    if not address or address.startswith("unix:"):
        return None
    parts = urlsplit(address if "://" in address else f"//{address}")
    try:
        port = parts.port or (80 if parts.scheme == "http" else default_port)
    except ValueError:  # a port out of range or not a number
        return None
    return (parts.hostname, port) if parts.hostname else None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def permitted(
    host: str, port: int, addresses: Iterable[str], named: Iterable[tuple[str, int]], public: bool = True
) -> bool:
    """Whether the proxy may connect to `host`:`port`, resolved to `addresses` (`public` False: the
    named destinations alone)."""
    if (host, port) in set(named):
        return True
    found = list(addresses)
    return public and port == PUBLIC_PORT and bool(found) and all(ipaddress.ip_address(a).is_global for a in found)


@dataclass
class Egress:
    """The proxy of one agent run: `socket` is what the sandbox shows the bridge."""

    named: tuple[tuple[str, int], ...]  # the run's own destinations: its runner, its model endpoint
    public: bool = True  # public hosts on 443 too (False: a closed network, the named alone)
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="arena-egress-")))
    refused: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.socket = self.folder / "egress.sock"
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.socket))
        self._server.listen(64)
        self._open = True
        self._slots = threading.BoundedSemaphore(CONNECTIONS)
        threading.Thread(target=self._serve, daemon=True).start()

    def forwards(self) -> tuple[tuple[str, int], ...]:
        """The named destinations on loopback: the bridge listens on each inside, at its port."""
        return tuple((host, port) for host, port in self.named if is_loopback(host))

    @property
    def proxy_port(self) -> int:
        """The agent's proxy port inside: PROXY_PORT, or the next one no forward listens on."""
        taken = {port for _, port in self.forwards()}
        return next(port for port in range(PROXY_PORT, PROXY_PORT + 100) if port not in taken)

    def close(self) -> None:
        self._open = False
        self._server.close()
        self.socket.unlink(missing_ok=True)
        self.folder.rmdir()

    def __enter__(self) -> Egress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _serve(self) -> None:
        while self._open:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                self.refused.append(f"a connection beyond {CONNECTIONS} open at once")
                client.close()
                continue
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        try:
            self._carry(client)
        finally:
            self._slots.release()

    def _carry(self, client: socket.socket) -> None:
        with client:
            client.settimeout(HEADER_TIMEOUT_S)
            try:
                header = read_header(client)
            except OSError:
                return
            client.settimeout(None)
            if header is None:
                return
            line = header.split(b"\r\n", 1)[0].decode("latin-1")
            method, target, upstream_header = _parse(line, header)
            where = destination(target)  # CONNECT's host:port, or an absolute URL
            if where is None:
                client.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
                return
            host, port = where
            try:
                addresses = sorted({info[4][0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)})
            except OSError:
                addresses = []
            if not permitted(host, port, addresses, self.named, self.public) or not addresses:
                self.refused.append(f"{method} {host}:{port}")
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            try:
                upstream = socket.create_connection((addresses[0], port), timeout=30)
            except OSError:
                client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            with upstream:
                upstream.settimeout(None)
                if method == "CONNECT":
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    upstream.sendall(past_header(header))
                else:
                    upstream.sendall(upstream_header)
                splice(client, upstream)


def read_header(connection: socket.socket) -> bytes | None:
    """The request or answer up to and with its blank line, and whatever came with it (the other
    side may send at once: a gRPC server's first frames); None if it never ends."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(4096)
        if not chunk or len(data) > HEADER_LIMIT:
            return None
        data += chunk
    return data


def past_header(data: bytes) -> bytes:
    """What came after the blank line: bytes of the connection itself, to pass on."""
    return data.split(b"\r\n\r\n", 1)[1]


def _parse(line: str, header: bytes) -> tuple[str, str, bytes]:
    """(method, target, the request as the upstream gets it: origin form for an absolute one)."""
    method, _, rest = line.partition(" ")
    target = rest.rsplit(" ", 1)[0] if " " in rest else rest
    if method == "CONNECT":
        return method, target, b""
    parts = urlsplit(target)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    first, _, tail = header.partition(b"\r\n")
    version = first.rsplit(b" ", 1)[-1]
    return method, target, f"{method} {path} ".encode("latin-1") + version + b"\r\n" + tail


def splice(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until each side has closed its half."""
    other = threading.Thread(target=_copy, args=(b, a), daemon=True)
    other.start()
    _copy(a, b)
    other.join()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(_COPY_BYTES):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

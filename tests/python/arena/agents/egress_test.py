"""The agent's egress proxy (arena.agents.egress): what it lets out, and that it carries bytes
either way as they come (a destination that speaks first, as a gRPC server does, included)."""

from __future__ import annotations

import socket
import threading
from typing import Iterator

import pytest

from arena.agents import egress as egress_module
from arena.agents.egress import Egress, destination, permitted


def test_destinations_of_runner_addresses_and_endpoint_urls() -> None:
    assert destination("127.0.0.1:50051") == ("127.0.0.1", 50051)
    assert destination("runner.example") == ("runner.example", 443)
    assert destination("https://api.anthropic.com") == ("api.anthropic.com", 443)
    assert destination("http://127.0.0.1:8080/v1") == ("127.0.0.1", 8080)
    assert destination("http://models.lan/v1") == ("models.lan", 80)
    assert destination("[::1]:9000") == ("::1", 9000)
    assert destination("") is None and destination("unix:/run/arena.sock") is None
    assert destination("runner:99999") is None and destination("runner:http") is None


def test_the_proxy_port_is_one_no_forward_listens_on() -> None:
    with Egress((("127.0.0.1", 3128), ("localhost", 3129), ("api.example", 443))) as egress:
        assert egress.forwards() == (("127.0.0.1", 3128), ("localhost", 3129))
        assert egress.proxy_port == 3130


def test_what_the_proxy_opens() -> None:
    named = [("127.0.0.1", 50051), ("models.lan", 80)]
    assert permitted("127.0.0.1", 50051, ["127.0.0.1"], named)  # the run's runner
    assert permitted("models.lan", 80, ["10.0.0.5"], named)  # its model endpoint, on the LAN
    assert permitted("api.anthropic.com", 443, ["160.79.104.10"], named)  # a public host over TLS
    assert not permitted("127.0.0.1", 5432, ["127.0.0.1"], named)  # another service of the machine
    assert not permitted("169.254.169.254", 80, ["169.254.169.254"], named)  # the cloud's metadata
    assert not permitted("metadata", 443, ["169.254.169.254"], named)  # ... by a name, on 443
    assert not permitted("intranet", 443, ["10.1.2.3"], named)  # the LAN
    assert not permitted("mixed", 443, ["160.79.104.10", "10.1.2.3"], named)  # any private address
    assert not permitted("example.com", 80, ["93.184.215.14"], named)  # public, but not TLS
    assert not permitted("nowhere", 443, [], named)
    # A closed network: the run's own destinations alone, no public host.
    assert permitted("models.lan", 80, ["10.0.0.5"], named, public=False)
    assert not permitted("api.anthropic.com", 443, ["160.79.104.10"], named, public=False)


@pytest.fixture
def speaks_first() -> Iterator[int]:
    """A TCP server on loopback that greets first, then echoes: its port."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            with client:
                client.sendall(b"hello;")
                client.sendall(b"echo:" + client.recv(100))

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def ask(egress: Egress, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as connection:
        connection.connect(str(egress.socket))
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
        return answer


def test_a_named_destination_is_carried_both_ways(speaks_first: int) -> None:
    with Egress((("127.0.0.1", speaks_first),)) as egress:
        answer = ask(egress, f"CONNECT 127.0.0.1:{speaks_first} HTTP/1.1\r\n\r\nping".encode())
        assert answer == b"HTTP/1.1 200 Connection established\r\n\r\nhello;echo:ping"
        # An absolute-form request goes on in origin form, its body with it.
        answer = ask(egress, f"POST http://127.0.0.1:{speaks_first}/v1/x?a=1 HTTP/1.1\r\nHost: h\r\n\r\nbody".encode())
        assert answer == b"hello;echo:POST /v1/x?a=1 HTTP/1.1\r\nHost: h\r\n\r\nbody"
        assert egress.refused == []


def test_anything_else_is_refused_and_kept(speaks_first: int) -> None:
    with Egress(()) as egress:
        assert ask(egress, f"CONNECT 127.0.0.1:{speaks_first} HTTP/1.1\r\n\r\n".encode()).startswith(b"HTTP/1.1 403")
        assert ask(egress, b"GET http://169.254.169.254/latest/meta-data HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
        assert ask(egress, b"NONSENSE\r\n\r\n").startswith(b"HTTP/1.1 400")
        assert egress.refused == [f"CONNECT 127.0.0.1:{speaks_first}", "GET 169.254.169.254:80"]
    assert not egress.folder.exists()  # its socket's folder goes with it


def test_connections_beyond_the_cap_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's agent cannot make the proxy hold a thread per connection without end."""
    monkeypatch.setattr(egress_module, "CONNECTIONS", 2)
    with Egress(()) as egress:
        idle = [socket.socket(socket.AF_UNIX) for _ in range(2)]
        for connection in idle:
            connection.connect(str(egress.socket))  # saying nothing: each holds a slot
        with socket.socket(socket.AF_UNIX) as third:
            third.connect(str(egress.socket))
            assert third.recv(100) == b""  # closed at once
        assert egress.refused == ["a connection beyond 2 open at once"]
        for connection in idle:
            connection.close()

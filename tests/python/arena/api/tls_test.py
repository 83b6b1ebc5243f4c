"""A real server with TLS on a free loopback port and clients with the right CA, the wrong one or
none; and the refusal to serve plaintext beyond loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.api.server import create_server
from arena.api.transport import InsecureTransport, server_credentials
from arena.client.client import Client
from arena.errors import ArenaError, NotReady
from arena_testing.tls_kit import Certificate, self_signed

SOFTMAX = "tasks/triton2triton/softmax:softmax"


@pytest.fixture
def certificate(tmp_path: Path) -> Certificate:
    return self_signed(tmp_path / "tls")


@pytest.fixture
def tls_address(certificate: Certificate, repo: Path, make_runner, tokens, kit):  # type: ignore[no-untyped-def]
    """A runner serving TLS on 127.0.0.1:<free port>."""
    server, port = create_server(
        "127.0.0.1:0",
        make_runner(repo, kit.FakeEvaluate()),
        tokens,
        credentials=server_credentials(certificate.cert, certificate.key),
    )
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(0).wait(5)


def test_a_client_trusting_the_runners_ca_completes_calls(tls_address: str, certificate: Certificate) -> None:
    with Client(tls_address, "alice-token", timeout_s=10, tls_ca=certificate.cert) as client:
        assert [task.address for task in client.list_tasks("triton2triton")] == [SOFTMAX]


def test_the_ca_can_come_from_the_environment(
    tls_address: str, certificate: Certificate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_TLS_CA", str(certificate.cert))
    with Client(tls_address, "alice-token", timeout_s=10) as client:
        assert client.get_task(SOFTMAX).address == SOFTMAX


def test_a_plaintext_client_gets_no_answer_from_a_tls_runner(tls_address: str) -> None:
    with Client(tls_address, "alice-token", timeout_s=5) as client:
        with pytest.raises(NotReady, match="cannot reach the runner"):
            client.list_tasks()


def test_a_client_trusting_another_ca_refuses_the_runner(tls_address: str, tmp_path: Path) -> None:
    stranger = self_signed(tmp_path / "other", name="stranger")
    with Client(tls_address, "alice-token", timeout_s=5, tls_ca=stranger.cert) as client:
        with pytest.raises(NotReady, match="cannot reach the runner"):
            client.list_tasks()


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0", ":0"])
def test_plaintext_beyond_loopback_is_refused_without_the_flag(
    address: str, repo: Path, make_runner, tokens, kit
) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InsecureTransport, match="--insecure-listen"):
        create_server(address, make_runner(repo, kit.FakeEvaluate()), tokens)


def test_a_client_refuses_to_send_its_token_in_plaintext_beyond_loopback(certificate: Certificate) -> None:
    with pytest.raises(InsecureTransport, match="--insecure-connect"):
        Client("192.0.2.1:50051", "alice-token")  # TEST-NET-1: never contacted
    Client("192.0.2.1:50051", "alice-token", insecure_connect=True).close()
    Client("192.0.2.1:50051", "alice-token", tls_ca=certificate.cert).close()


def test_a_missing_ca_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ArenaError, match="cannot read the TLS CA certificate"):
        Client("127.0.0.1:1", "alice-token", tls_ca=tmp_path / "missing.pem")

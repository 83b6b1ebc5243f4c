"""What counts as loopback, and the refusals of plaintext beyond it (both ends)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.api.transport import (
    InsecureTransport,
    address_host,
    channel_credentials,
    is_loopback,
    require_safe_connect,
    require_safe_listen,
    server_credentials,
)
from arena.errors import ArenaError


@pytest.mark.parametrize(
    ("address", "host"),
    [("127.0.0.1:50051", "127.0.0.1"), ("[::1]:0", "::1"), (":50051", ""), ("runner.example:443", "runner.example")],
)
def test_the_host_of_an_address(address: str, host: str) -> None:
    assert address_host(address) == host


@pytest.mark.parametrize(
    "address", ["127.0.0.1:0", "127.8.9.10:50051", "[::1]:50051", "localhost:50051", "LOCALHOST:1", "unix:/run/a.sock"]
)
def test_loopback_addresses(address: str) -> None:
    assert is_loopback(address)


@pytest.mark.parametrize(
    "address",
    [
        "0.0.0.0:50051",
        "[::]:50051",
        ":50051",
        "10.0.0.5:50051",
        "runner.example:50051",
        "localhost.evil.example:1",
        "[::ffff:10.0.0.1]:1",
        "128.0.0.1:1",
    ],  # fmt: skip
)
def test_addresses_beyond_loopback(address: str) -> None:
    assert not is_loopback(address)


def test_plaintext_listening_beyond_loopback_is_refused_naming_the_flag() -> None:
    with pytest.raises(InsecureTransport, match="--insecure-listen") as refused:
        require_safe_listen("0.0.0.0:50051", tls=False, insecure_listen=False)
    assert "--tls-cert" in str(refused.value) and isinstance(refused.value, ArenaError)


def test_listening_beyond_loopback_is_allowed_with_tls_or_the_flag() -> None:
    require_safe_listen("0.0.0.0:50051", tls=True, insecure_listen=False)
    require_safe_listen("0.0.0.0:50051", tls=False, insecure_listen=True)
    require_safe_listen("127.0.0.1:50051", tls=False, insecure_listen=False)


def test_plaintext_calls_beyond_loopback_are_refused_naming_the_flag() -> None:
    with pytest.raises(InsecureTransport, match="--insecure-connect"):
        require_safe_connect("runner.example:50051", tls=False, insecure_connect=False)
    require_safe_connect("runner.example:50051", tls=True, insecure_connect=False)
    require_safe_connect("runner.example:50051", tls=False, insecure_connect=True)
    require_safe_connect("[::1]:50051", tls=False, insecure_connect=False)


def test_missing_or_malformed_pem_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ArenaError, match=r"cannot read the TLS CA certificate .*nope\.pem"):
        channel_credentials(tmp_path / "nope.pem")
    (tmp_path / "junk.pem").write_text("not a certificate")
    with pytest.raises(ArenaError, match=r"TLS private key .*junk\.pem is not a PEM file"):
        server_credentials(tmp_path / "cert.pem", tmp_path / "junk.pem")

"""Self-signed TLS certificates for loopback tests, made with the `openssl` command line
(the `cryptography` package is not a requirement of the product's resolve)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Certificate:
    cert: Path  # PEM; self-signed, so it is also the CA a client trusts
    key: Path  # PEM private key


def self_signed(folder: Path, name: str = "runner") -> Certificate:
    """A certificate for 127.0.0.1, ::1 and localhost, valid for a day; skips the test without openssl."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed")
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-nodes",
            "-days",
            "1",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            f"/CN={name}",
            "-addext",
            "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost",
        ],  # fmt: skip
        check=True,
        capture_output=True,
        timeout=60,
    )
    return Certificate(cert, key)

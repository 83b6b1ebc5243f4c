"""PEM files for TLS (certificates, keys, CAs): read once, refused with a clear error when missing
or holding no PEM block. Shared by the runner's transport and the pool's channels."""

from __future__ import annotations

from pathlib import Path

from arena.errors import ArenaError


def read_pem(path: Path, what: str) -> bytes:
    """The PEM file's bytes; a clear error when it is missing or holds no PEM block."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ArenaError(f"cannot read the {what} {path}: {error.strerror or error}") from None
    if b"-----BEGIN " not in data:
        raise ArenaError(f"the {what} {path} is not a PEM file")
    return data

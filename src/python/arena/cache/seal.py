"""Stored rows are sealed with a key only the runner holds.

A row written by anyone without the key (a candidate's daemon that reaches the cache file, a hand
edit, another tenant of a shared cache) does not open: it reads as a miss and is evaluated again.
The key lives beside the store in a file only its owner may read; the harness child never sees
that folder (docs/harness.md, the sandbox).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import tempfile
from pathlib import Path

KEY_BYTES = 32


def load_key(path: Path) -> bytes:
    """The key in `path`, made (owner-only) on first use. The file appears whole or not at all
    (written aside, then linked into place), so racing processes all read the one that won."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        descriptor, aside = tempfile.mkstemp(dir=path.parent, prefix=".key-")  # mode 0600
        try:
            with os.fdopen(descriptor, "wb") as out:
                out.write(secrets.token_bytes(KEY_BYTES))
            with contextlib.suppress(FileExistsError):
                os.link(aside, path)
        finally:
            os.unlink(aside)
    key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise ValueError(f"{path} does not hold a {KEY_BYTES}-byte key")
    return key


def seal(key: bytes, name: str, payload: bytes) -> str:
    """The seal of `payload` stored under `name` (a row cannot be moved to another name)."""
    label = name.encode()
    return hmac.new(key, b"%d:%s" % (len(label), label) + payload, hashlib.sha256).hexdigest()


def opens(key: bytes, name: str, payload: bytes, mark: str | None) -> bool:
    return mark is not None and hmac.compare_digest(seal(key, name, payload), str(mark))

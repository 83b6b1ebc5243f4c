"""Stored rows are sealed with a key only the runner holds.

A row written by anyone without the key (a candidate's daemon that reaches the cache file, a hand
edit, another tenant of a shared cache) does not open: it reads as a miss and is evaluated again.
The key lives beside the store in a file only its owner may read; the harness child never sees
that folder (docs/harness.md, the sandbox).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

KEY_BYTES = 32


def load_key(path: Path) -> bytes:
    """The key in `path`, made (owner-only) on first use; two processes racing make one key."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_bytes()
        if len(key) != KEY_BYTES:
            raise ValueError(f"{path} does not hold a {KEY_BYTES}-byte key") from None
        return key
    key = secrets.token_bytes(KEY_BYTES)
    with os.fdopen(descriptor, "wb") as out:
        out.write(key)
    return key


def seal(key: bytes, name: str, payload: bytes) -> str:
    """The seal of `payload` stored under `name` (a row cannot be moved to another name)."""
    label = name.encode()
    return hmac.new(key, b"%d:%s" % (len(label), label) + payload, hashlib.sha256).hexdigest()


def opens(key: bytes, name: str, payload: bytes, mark: str | None) -> bool:
    return mark is not None and hmac.compare_digest(seal(key, name, payload), str(mark))

"""Bounded echoes of caller input in error messages.

An error quotes what it refuses so the caller can see which value it was, but only a short
prefix of it: a megabyte-long address or path must not come back as a megabyte-long message
(gRPC carries the message in trailing metadata, which has a size limit of a few KiB).
"""

from __future__ import annotations

QUOTE_CHARS = 200  # of one input value an error message echoes
MESSAGE_BYTES = 1000  # of a whole message sent back to a caller (UTF-8)


def quote(value: str, limit: int = QUOTE_CHARS) -> str:
    """`value` as ascii() shows it, cut to its first `limit` characters (saying how long it was)."""
    if len(value) <= limit:
        return ascii(value)
    return f"{ascii(value[:limit])}... ({len(value)} characters)"


def cut(text: str, limit: int = MESSAGE_BYTES) -> str:
    """`text` at most `limit` UTF-8 bytes long: its head and tail, with what was left out counted.

    The tail is kept because a message often ends with what to do about it.
    """
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    head = encoded[: limit * 2 // 3].decode(errors="ignore")
    tail = encoded[-(limit // 4) :].decode(errors="ignore")
    return f"{head} [... {len(encoded) - len(head.encode()) - len(tail.encode())} bytes cut ...] {tail}"

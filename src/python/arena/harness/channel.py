"""The result channel: one HMAC-signed JSON document on a pipe opened by the parent.

Frame: 64 hex digits of HMAC-SHA256(key, payload), a newline, the payload (UTF-8 JSON).
Anything else on the pipe (a second frame, junk written by a candidate) fails verification.
"""

from __future__ import annotations

import hashlib
import hmac


class ChannelError(ValueError):
    """The bytes on the result channel are not exactly one frame signed with the run's key."""


def sign_frame(key: bytes, payload: str) -> bytes:
    data = payload.encode()
    return hmac.new(key, data, hashlib.sha256).hexdigest().encode() + b"\n" + data


def open_frame(key: bytes, frame: bytes) -> str:
    """The payload of `frame`; ChannelError unless it is one frame signed with `key`."""
    signature, newline, data = frame.partition(b"\n")
    if not newline or len(signature) != 64:
        raise ChannelError("the result channel does not hold one signed frame")
    want = hmac.new(key, data, hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(signature, want):
        raise ChannelError("the result's signature does not match this run's key")
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise ChannelError("the result is not UTF-8") from None

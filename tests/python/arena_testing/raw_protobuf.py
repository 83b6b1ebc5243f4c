"""Protobuf bytes written by hand: requests no generated client would send."""

from __future__ import annotations


def varint(number: int) -> bytes:
    out = b""
    while True:
        low, number = number & 0x7F, number >> 7
        if not number:
            return out + bytes([low])
        out += bytes([low | 0x80])


def field(number: int, payload: bytes | str) -> bytes:
    """A length-delimited protobuf field (strings, bytes, messages)."""
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data

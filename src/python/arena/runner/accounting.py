"""Accounting: what an agent spent on an attempt (Usage) and its event stream (the trajectory).

Operators record both after the agent's run (RecordUsage); the runner's own counters (checks and
evaluations used) are never taken from them. A trajectory travels and is kept gzip-compressed: the
runner checks it is whole gzip data and, by inflating it piece by piece without keeping it, that it
is at most `max_bytes` once decompressed, so neither a huge stream nor a small bomb gets in.
"""

from __future__ import annotations

import math
import sqlite3
import zlib
from typing import Iterator

from arena.errors import InvalidRequest, NotFound
from arena.runner.quoting import quote
from arena.runner.records import Usage

MAX_TRAJECTORY_BYTES = 64 << 20  # a trajectory's size once decompressed
MAX_NAME_CHARS = 200
GZIP_WBITS = 16 + zlib.MAX_WBITS  # zlib's gzip framing
CHUNK_BYTES = 1 << 20


def compress_trajectory(content: bytes, max_bytes: int = MAX_TRAJECTORY_BYTES) -> bytes:
    """`content` gzip-compressed, or InvalidRequest when it is over `max_bytes`."""
    if len(content) > max_bytes:
        raise InvalidRequest(too_big(len(content), max_bytes))
    compressor = zlib.compressobj(6, zlib.DEFLATED, GZIP_WBITS)
    return compressor.compress(content) + compressor.flush()


def inflate_trajectory(compressed: bytes, max_bytes: int = MAX_TRAJECTORY_BYTES) -> bytes:
    """The decompressed trajectory; InvalidRequest when it is no gzip data or over `max_bytes`."""
    return b"".join(inflated_chunks(compressed, max_bytes))


def trajectory_size(compressed: bytes, max_bytes: int = MAX_TRAJECTORY_BYTES) -> int:
    """Bytes once decompressed, counted without keeping them; InvalidRequest as inflate_trajectory."""
    return sum(len(chunk) for chunk in inflated_chunks(compressed, max_bytes))


def inflated_chunks(compressed: bytes, max_bytes: int) -> Iterator[bytes]:
    """The decompressed bytes of every gzip member in `compressed`, a chunk at a time."""
    size, data = 0, compressed
    try:
        while data:
            inflater = zlib.decompressobj(GZIP_WBITS)
            while not inflater.eof:
                chunk = inflater.decompress(data, CHUNK_BYTES)
                data = inflater.unconsumed_tail
                size += len(chunk)
                if size > max_bytes:
                    raise InvalidRequest(too_big(size, max_bytes, at_least=True))
                if not chunk and not data and not inflater.eof:
                    raise InvalidRequest("the trajectory's gzip data is cut short")
                yield chunk
            data = inflater.unused_data
    except zlib.error as error:
        raise InvalidRequest(f"the trajectory is not gzip data: {error}") from None


def too_big(size: int, max_bytes: int, at_least: bool = False) -> str:
    return (
        f"the trajectory is {'over ' if at_least else ''}{size} bytes, more than the {max_bytes} bytes "
        f"({max_bytes / (1 << 20):g} MiB) the runner keeps per attempt: cut the event stream, or keep it elsewhere"
    )


def check_usage(usage: Usage) -> None:
    """InvalidRequest unless every count is a whole number >= 0 and every amount finite and >= 0."""
    counts = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_tokens": usage.cached_tokens,
        "turns": usage.turns,
        "tool_calls": usage.tool_calls,
    }
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidRequest(f"usage {name} must be a whole number >= 0, not {value!r}")
    amounts = {"wall_s": usage.wall_s, "cost_usd": usage.cost_usd}
    for name, amount in amounts.items():
        if amount is not None and not (math.isfinite(amount) and amount >= 0):
            raise InvalidRequest(f"usage {name} must be a finite number >= 0, not {amount!r}")


def check_trajectory_name(name: str) -> None:
    if len(name) > MAX_NAME_CHARS or not name.isprintable():
        raise InvalidRequest(
            f"a trajectory's name is printable text of at most {MAX_NAME_CHARS} characters, not {quote(name)}"
        )


def record_usage(
    conn: sqlite3.Connection, attempt_id: str, usage: Usage, name: str, compressed: bytes, size: int, now_ms: int
) -> None:
    """Store (or replace) the attempt's usage, and its trajectory unless `compressed` is empty."""
    conn.execute(
        "INSERT OR REPLACE INTO usage (attempt, input_tokens, output_tokens, cached_tokens, cost_usd, turns,"
        " tool_calls, wall_s, recorded_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            attempt_id,
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_tokens,
            usage.cost_usd,
            usage.turns,
            usage.tool_calls,
            usage.wall_s,
            now_ms,
        ),
    )
    if compressed:
        conn.execute(
            "INSERT OR REPLACE INTO trajectories (attempt, name, size, gzip) VALUES (?, ?, ?, ?)",
            (attempt_id, name, size, compressed),
        )


def read_trajectory(conn: sqlite3.Connection, attempt_id: str) -> tuple[str, bytes]:
    """(name, gzip-compressed content) of the attempt's trajectory."""
    row = conn.execute("SELECT name, gzip FROM trajectories WHERE attempt = ?", (attempt_id,)).fetchone()
    if row is None:
        raise NotFound(f"no trajectory was recorded for attempt {quote(attempt_id)}")
    return row["name"], bytes(row["gzip"])


def usage_from_row(row: sqlite3.Row) -> Usage | None:
    """The Usage in a row joined from the usage table (its columns by name), None where there was none."""
    if row["input_tokens"] is None:
        return None
    return Usage(
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        cached_tokens=row["cached_tokens"],
        cost_usd=row["cost_usd"],
        turns=row["turns"],
        tool_calls=row["tool_calls"],
        wall_s=row["wall_s"],
    )

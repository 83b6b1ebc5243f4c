"""Reading and writing the JSON-lines event streams agents print on stdout."""

from __future__ import annotations

import json
import sys
from typing import Any, Iterator


def read_events(stream: bytes) -> Iterator[dict[str, Any]]:
    """Each line of `stream` that is a JSON object; other lines (banners, a line cut by a kill) are skipped."""
    for line in stream.splitlines():
        line = line.strip()
        if not line.startswith(b"{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def emit(event: dict[str, Any]) -> None:
    """Print one event as a JSON line, flushed at once (a killed agent keeps what it printed)."""
    sys.stdout.write(json.dumps(event, sort_keys=True) + "\n")
    sys.stdout.flush()


def number(value: Any) -> int:
    """A token count from an event field; anything that is not a number counts 0."""
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0

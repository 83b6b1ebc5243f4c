"""A live status for long commands: the item awaited, its stage, how long it has taken, an ETA.

On a terminal one status line is redrawn in place every second, under the lines the command
prints (a result line clears it first). Elsewhere (a log file, CI) nothing is redrawn: a plain
line is printed each time the awaited item's stage changes.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, TextIO

_CLEAR = "\r\x1b[2K"  # to the start of the line, then erase it
TICK_S = 1.0


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    """`total` items awaited one after another (others may run meanwhile, as a runner's lanes do)."""

    def __init__(
        self,
        total: int,
        stream: TextIO,
        interactive: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total, self.stream, self.clock = total, stream, clock
        self.interactive = stream.isatty() if interactive is None else interactive
        self.began = clock()
        self.finished = 0
        self.label, self.stage_name, self.since = "", "", self.began
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self.interactive:
            self._ticker = threading.Thread(target=self._tick, name="arena-progress", daemon=True)
            self._ticker.start()

    def waiting(self, label: str) -> None:
        """The command now waits for `label`."""
        with self._lock:
            self.label, self.since = label, self.clock()
        self.stage(label, "waiting")

    def stage(self, label: str, stage: str) -> None:
        """`label` reached `stage` (queued, running, ...); safe from any thread."""
        with self._lock:
            if label != self.label or stage == self.stage_name:
                return
            self.stage_name = stage
            if not self.interactive and stage != "done":
                self.stream.write(f"... {self.text()}\n")
                self.stream.flush()
        if self.interactive:
            self._draw()

    def print(self, line: str) -> None:
        """A finished item's line (counted), above the status line."""
        with self._lock:
            self.finished += 1
            self.label, self.stage_name = "", ""
            self.stream.write((_CLEAR if self.interactive else "") + line + "\n")
            self.stream.flush()

    def note(self, line: str) -> None:
        """A line that finishes nothing (a skipped task, a refusal)."""
        with self._lock:
            self.stream.write((_CLEAR if self.interactive else "") + line + "\n")
            self.stream.flush()

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(2 * TICK_S)
            with self._lock:
                self.stream.write(_CLEAR)
                self.stream.flush()

    def eta_s(self) -> float | None:
        """Seconds left at the pace so far (items finished per second since the start); None
        before the first item finishes."""
        if not self.finished:
            return None
        pace = (self.clock() - self.began) / self.finished
        return pace * (self.total - self.finished)

    def text(self) -> str:
        """The status line (the caller holds the lock or does not mind a torn read)."""
        now = self.clock()
        parts = [f"[{self.finished + 1}/{self.total}] {self.label}: {self.stage_name} {_duration(now - self.since)}"]
        eta = self.eta_s()
        parts.append(f"ETA {_duration(eta)}" if eta is not None else "ETA after the first result")
        return ", ".join(parts)

    def _draw(self) -> None:
        with self._lock:
            if self.label:
                self.stream.write(_CLEAR + self.text())
                self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            self._draw()

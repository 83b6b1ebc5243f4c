"""The cache flush run before every timed call: one pass over a buffer of >= 2x the last-level cache.

NVIDIA: 2x L2, at least 256 MiB (that much device work also hides the host's launch cost of
the timed call behind the flush). ROCm: at least 512 MiB, twice MI300X's 256 MB Infinity Cache.

The pass reads by default. Reading 2x the cache evicts every line, and whatever was dirty (the
last call's outputs, the inputs just restored) is written back inside the flush, so the timed
call starts from a cache full of clean lines whatever the gap before it. A writing pass leaves
the whole cache dirty instead: the timed call then pays for writing those lines back, and how
much of that it pays depends on how long the GPU idled before it (bench/RESULTS.md measures both).
"""

from __future__ import annotations

import torch

from arena.harness.device import Device, last_level_cache_bytes

_MIN_BYTES = {"cuda": 256 << 20, "rocm": 512 << 20}
MODES = ("read", "write")


def flush_bytes(device: Device) -> int:
    return max(2 * last_level_cache_bytes(device), _MIN_BYTES.get(device.backend, 0))


class Flusher:
    """Owns the flush buffer; run() enqueues one full pass over it on the current stream."""

    def __init__(self, device: Device, mode: str = "read") -> None:
        if mode not in MODES:
            raise ValueError(f"flush mode {mode!r}: expected one of {', '.join(MODES)}")
        self.nbytes, self.mode = flush_bytes(device), mode
        self._buffer = torch.zeros(self.nbytes // 4, dtype=torch.int32, device=device.torch_device)
        self._sink = torch.zeros((), dtype=torch.int32, device=device.torch_device)
        self._value = 0

    def run(self) -> None:
        if self.mode == "read":
            torch.amax(self._buffer, dim=0, out=self._sink)  # every element read, one word written
            return
        self._value ^= 1  # a different value each time, so no write can be skipped as redundant
        self._buffer.fill_(self._value)

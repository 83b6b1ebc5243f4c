"""The cache flush run before every timed call: a kernel writing >= 2x the last-level cache.

NVIDIA: 2x L2, at least 256 MiB (that much device work also hides the host's launch cost of
the timed call behind the flush). ROCm: at least 512 MiB, twice MI300X's 256 MB Infinity Cache.
"""

from __future__ import annotations

import torch

from arena.harness.device import Device, last_level_cache_bytes

_MIN_BYTES = {"cuda": 256 << 20, "rocm": 512 << 20}


def flush_bytes(device: Device) -> int:
    return max(2 * last_level_cache_bytes(device), _MIN_BYTES.get(device.backend, 0))


class Flusher:
    """Owns the flush buffer; run() enqueues one full write of it on the current stream."""

    def __init__(self, device: Device) -> None:
        self.nbytes = flush_bytes(device)
        self._buffer = torch.empty(self.nbytes // 4, dtype=torch.int32, device=device.torch_device)
        self._value = 0

    def run(self) -> None:
        self._value ^= 1  # a different value each time, so no write can be skipped as redundant
        self._buffer.fill_(self._value)

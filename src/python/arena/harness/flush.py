"""The cache flush run before every timed call: one pass over a buffer of >= 2x the last-level cache.

NVIDIA: 2x L2, at least 256 MiB (that much device work also hides the host's launch cost of
the timed call behind the flush). ROCm: at least 512 MiB, twice MI300X's 256 MB Infinity Cache.

The pass reads by default: it evicts every line and writes back whatever was dirty inside the
flush, so the timed call starts from clean lines whatever the gap before it; a writing pass
leaves the cache dirty, and the call pays for that by how long the GPU idled (bench/results/
2026-11-29.md, "A reading flush, and children started ahead").

Small calls then get their inputs back (warm_limit, touch): a call whose inputs and outputs fit
in a quarter of the last-level cache finds them there, as it would behind the operation that
produced them in a model, rather than timing its first DRAM and TLB misses (bench/results/
2026-12-02.md, session 12).
"""

from __future__ import annotations

import torch

from arena.harness.device import Device, last_level_cache_bytes
from arena.harness.settings import WARM_INPUTS

_MIN_BYTES = {"cuda": 256 << 20, "rocm": 512 << 20}
MODES = ("read", "write")


def flush_bytes(device: Device) -> int:
    return max(2 * last_level_cache_bytes(device), _MIN_BYTES.get(device.backend, 0))


def warm_limit(device: Device, warm_inputs: str) -> int:
    """Bytes of inputs and outputs a timed call may have and still get its inputs warm (touch)."""
    if warm_inputs not in WARM_INPUTS:
        raise ValueError(f"warm_inputs {warm_inputs!r}: expected one of {', '.join(WARM_INPUTS)}")
    return last_level_cache_bytes(device) // 4 if warm_inputs == "small" else 0


class Flusher:
    """Owns the flush buffer; run() enqueues one full pass over it on the current stream."""

    def __init__(self, device: Device, mode: str = "read") -> None:
        if mode not in MODES:
            raise ValueError(f"flush mode {mode!r}: expected one of {', '.join(MODES)}")
        self.nbytes, self.mode = flush_bytes(device), mode
        self._buffer = torch.zeros(self.nbytes // 4, dtype=torch.int32, device=device.torch_device)
        self._sink = torch.zeros((), dtype=torch.int32, device=device.torch_device)
        self._byte_sink = torch.zeros((), dtype=torch.uint8, device=device.torch_device)
        self._value = 0

    def run(self) -> None:
        if self.mode == "read":
            torch.amax(self._buffer, dim=0, out=self._sink)  # every element read, one word written
            return
        self._value ^= 1  # a different value each time, so no write can be skipped as redundant
        self._buffer.fill_(self._value)

    def touch(self, tensors: list[torch.Tensor]) -> None:
        """Read every byte of `tensors` once (after run(): they are what the cache holds)."""
        for tensor in tensors:
            if tensor.numel() == 0:
                continue
            flat = tensor.reshape(-1) if tensor.is_contiguous() else tensor.contiguous().reshape(-1)
            torch.amax(flat.view(torch.uint8), dim=0, out=self._byte_sink)

"""Histogram of small non-negative integer keys."""

import torch
import triton
import triton.language as tl


@triton.jit
def _histogram_kernel(keys_ptr, counts_ptr, n, num_bins, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    keys = tl.load(keys_ptr + offs, mask=mask, other=0)
    local = tl.histogram(keys, BINS, mask=mask)
    bins = tl.arange(0, BINS)
    tl.atomic_add(counts_ptr + bins, local, mask=(bins < num_bins) & (local > 0))


def histogram(keys: torch.Tensor, num_bins: int) -> torch.Tensor:
    """(num_bins,) int32 counts of each value of the int32 keys, all in [0, num_bins)."""
    n = keys.numel()
    counts = torch.zeros(num_bins, dtype=torch.int32, device=keys.device)
    block = 4096
    _histogram_kernel[(triton.cdiv(n, block),)](keys, counts, n, num_bins, BLOCK=block,
                                                BINS=triton.next_power_of_2(num_bins))
    return counts

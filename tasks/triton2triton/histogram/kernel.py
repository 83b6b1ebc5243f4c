"""histogram: counts of each value in [0, B) over an (N,) int32 tensor."""

import torch
import triton
import triton.language as tl


@triton.jit
def _histogram_kernel(x_ptr, counts_ptr, N, B, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    local = tl.histogram(x, BINS, mask=mask)
    bins = tl.arange(0, BINS)
    tl.atomic_add(counts_ptr + bins, local, mask=(bins < B) & (local > 0))


def histogram(x: torch.Tensor, B: int) -> torch.Tensor:
    """Counts of each value of x (all in [0, B)); returns a new (B,) int32 tensor."""
    N = x.shape[0]
    counts = torch.zeros(B, dtype=torch.int32, device=x.device)
    block = 1024
    _histogram_kernel[(triton.cdiv(N, block),)](x, counts, N, B, BINS=triton.next_power_of_2(B), BLOCK=block)
    return counts

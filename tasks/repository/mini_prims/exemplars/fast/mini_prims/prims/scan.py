"""Exclusive prefix sum with wider chunks and more warps.

The radix sort's digit table has 16 entries per block of keys (16k for a million keys); the
baseline walks it 1024 at a time with 4 warps, here 4096 at a time with 8.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _exclusive_scan_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    carry = tl.zeros([], dtype=tl.int32)
    tl.store(out_ptr, carry)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0)
        tl.store(out_ptr + 1 + offs, tl.cumsum(x, axis=0) + carry, mask=mask)
        carry += tl.sum(x, axis=0)


def exclusive_scan(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out = torch.empty(n + 1, dtype=torch.int32, device=x.device)
    _exclusive_scan_kernel[(1,)](x, out, n, BLOCK=4096, num_warps=8)
    return out

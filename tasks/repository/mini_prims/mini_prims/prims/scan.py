"""Exclusive prefix sum of an int32 vector."""

import torch
import triton
import triton.language as tl


@triton.jit
def _exclusive_scan_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # out[0] = 0 and out[i + 1] = x[0] + ... + x[i]; one program walks the vector in chunks.
    carry = tl.zeros([], dtype=tl.int32)
    tl.store(out_ptr, carry)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0)
        inclusive = tl.cumsum(x, axis=0) + carry
        tl.store(out_ptr + 1 + offs, inclusive, mask=mask)
        carry += tl.sum(x, axis=0)


def exclusive_scan(x: torch.Tensor) -> torch.Tensor:
    """(n + 1,) int32: 0 followed by the running sums of the (n,) int32 vector x."""
    n = x.numel()
    out = torch.empty(n + 1, dtype=torch.int32, device=x.device)
    _exclusive_scan_kernel[(1,)](x, out, n, BLOCK=1024)
    return out

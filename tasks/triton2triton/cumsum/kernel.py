"""cumsum: inclusive prefix sum over the last dim of a contiguous (M, N) matrix."""

import torch
import triton
import triton.language as tl


@triton.jit
def _cumsum_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * N
    y_row = y_ptr + row.to(tl.int64) * N
    carry = tl.zeros([1], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def cumsum(x: torch.Tensor) -> torch.Tensor:
    """Inclusive prefix sum over the last dim of a contiguous (M, N) tensor; same dtype out."""
    M, N = x.shape
    y = torch.empty_like(x)
    _cumsum_kernel[(M,)](x, y, N, BLOCK=128)
    return y

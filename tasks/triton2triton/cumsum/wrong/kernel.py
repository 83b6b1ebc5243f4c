"""cumsum with wide blocks, scanning and carrying in the input dtype (float16 sums drift)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _cumsum_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * N
    y_row = y_ptr + row * N
    carry = tl.zeros([1], dtype=y_ptr.dtype.element_ty)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(y_row + cols, y, mask=mask)
        carry += tl.sum(x, axis=0)


def cumsum(x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    y = torch.empty_like(x)
    block = min(4096, triton.next_power_of_2(N))
    _cumsum_kernel[(M,)](x, y, N, BLOCK=block, num_warps=8 if block >= 2048 else 4)
    return y

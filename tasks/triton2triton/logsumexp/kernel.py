"""logsumexp: row-wise log(sum(exp(x))) of a contiguous (M, N) matrix, returned in float32."""

import torch
import triton
import triton.language as tl


@triton.jit
def _logsumexp_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * N
    # Pass 1: the row maximum.
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    # Pass 2: the sum of exponentials, shifted by the maximum.
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        s += tl.exp(x - row_max)
    tl.store(out_ptr + row, row_max + tl.log(tl.sum(s, axis=0)))


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """(M,) float32 logsumexp of each row of a contiguous (M, N) tensor."""
    M, N = x.shape
    out = torch.empty(M, dtype=torch.float32, device=x.device)
    _logsumexp_kernel[(M,)](x, out, N, BLOCK=1024, num_warps=4)
    return out

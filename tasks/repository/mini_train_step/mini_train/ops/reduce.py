"""Column sums of a 2-D tensor (bias gradients)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _column_sum_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        acc += tl.load(
            x_ptr + rows.to(tl.int64)[:, None] * N + cols[None, :],
            mask=(rows[:, None] < M) & (cols[None, :] < N),
            other=0.0,
        ).to(tl.float32)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0), mask=cols < N)


def column_sum(x: torch.Tensor) -> torch.Tensor:
    """Sum over the rows of a contiguous (M, N) tensor, accumulated and returned in float32 (N,)."""
    M, N = x.shape
    out = torch.empty((N,), dtype=torch.float32, device=x.device)
    block_n = 64
    _column_sum_kernel[(triton.cdiv(N, block_n),)](x, out, M, N, BLOCK_M=32, BLOCK_N=block_n)
    return out

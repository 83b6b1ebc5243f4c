"""column_sum: the sum over rows of an (M, N) matrix (e.g. a bias gradient over tokens)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _column_sum_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        acc += tl.load(x_ptr + rows.to(tl.int64)[:, None] * N + cols[None, :],
                       mask=(rows[:, None] < M) & cmask[None, :], other=0.0).to(tl.float32)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0), mask=cmask)


def column_sum(x):
    """Sum over dim 0 of a contiguous (M, N) tensor, as float32 (N,)."""
    M, N = x.shape
    out = torch.empty(N, dtype=torch.float32, device=x.device)
    block_n = 64
    _column_sum_kernel[(triton.cdiv(N, block_n),)](x, out, M, N, BLOCK_M=64, BLOCK_N=block_n)
    return out

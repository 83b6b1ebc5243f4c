"""column_sum: the sum over rows of an (M, N) matrix (e.g. a bias gradient over tokens)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _partial_kernel(x_ptr, part_ptr, M, N, ROWS_PER_PROG, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    first = tl.program_id(1) * ROWS_PER_PROG
    last = tl.minimum(first + ROWS_PER_PROG, M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for m0 in range(first, last, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        acc += tl.load(x_ptr + rows.to(tl.int64)[:, None] * N + cols[None, :],
                       mask=(rows[:, None] < last) & cmask[None, :], other=0.0).to(tl.float32)
    tl.store(part_ptr + tl.program_id(1) * N + cols, tl.sum(acc, axis=0), mask=cmask)


@triton.jit
def _sum_parts_kernel(part_ptr, out_ptr, P, N, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for p in range(0, P):
        acc += tl.load(part_ptr + p * N + cols, mask=cmask, other=0.0)
    tl.store(out_ptr + cols, acc, mask=cmask)


def column_sum(x):
    """Sum over dim 0 of a contiguous (M, N) tensor, as float32 (N,)."""
    M, N = x.shape
    out = torch.empty(N, dtype=torch.float32, device=x.device)
    block_m, block_n = 64, 64
    n_blocks = triton.cdiv(N, block_n)
    # The rows are split into slabs (at least 128 programs in all); each slab writes a float32
    # partial row and a second kernel adds the partial rows in order (deterministic).
    slabs = max(1, min(triton.cdiv(128, n_blocks), triton.cdiv(M, block_m)))
    rows_per_prog = triton.cdiv(triton.cdiv(M, slabs), block_m) * block_m
    slabs = triton.cdiv(M, rows_per_prog)
    part = torch.empty((slabs, N), dtype=torch.float32, device=x.device)
    _partial_kernel[(n_blocks, slabs)](x, part, M, N, rows_per_prog, BLOCK_M=block_m, BLOCK_N=block_n)
    _sum_parts_kernel[(triton.cdiv(N, 128),)](part, out, slabs, N, BLOCK_N=128)
    return out

"""column_sum with small tiles spread over about 1024 programs.

The baseline gives each program a 64 x 64 tile and splits the rows only until there are 128
programs (one per SM): each SM then streams its slab with a single chain of dependent loads, 8
KB in flight, which is a fraction of what it takes to keep HBM busy. Here the tiles are 32 x 128
(each row segment a 256-byte run) and the rows are split into enough slabs for about 1024
programs, several resident per SM; each writes a float32 partial row and a second kernel adds the
partials in a fixed order (deterministic, no atomics).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _partial_kernel(x_ptr, part_ptr, M, N, ROWS_PER_PROG, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    pid_m = tl.program_id(1)
    cmask = cols < N
    first = pid_m * ROWS_PER_PROG
    last = tl.minimum(first + ROWS_PER_PROG, M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for m0 in range(first, last, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        acc += tl.load(x_ptr + rows.to(tl.int64)[:, None] * N + cols[None, :],
                       mask=(rows[:, None] < last) & cmask[None, :], other=0.0).to(tl.float32)
    tl.store(part_ptr + pid_m * N + cols, tl.sum(acc, axis=0), mask=cmask)


@triton.jit
def _sum_parts_kernel(part_ptr, out_ptr, P, N, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    acc = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    for p0 in range(0, P, BLOCK_P):
        rows = p0 + tl.arange(0, BLOCK_P)
        acc += tl.load(part_ptr + rows[:, None] * N + cols[None, :], mask=(rows[:, None] < P) & cmask[None, :],
                       other=0.0)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0), mask=cmask)


def column_sum(x):
    M, N = x.shape
    out = torch.empty(N, dtype=torch.float32, device=x.device)
    block_m, block_n = 32, 128
    n_blocks = triton.cdiv(N, block_n)
    slabs = max(1, min(triton.cdiv(1024, n_blocks), triton.cdiv(M, 4 * block_m)))
    rows_per_prog = triton.cdiv(triton.cdiv(M, slabs), block_m) * block_m
    slabs = triton.cdiv(M, rows_per_prog)
    part = torch.empty((slabs, N), dtype=torch.float32, device=x.device)
    _partial_kernel[(n_blocks, slabs)](x, part, M, N, rows_per_prog, BLOCK_M=block_m, BLOCK_N=block_n,
                                       num_warps=4)
    _sum_parts_kernel[(triton.cdiv(N, 64),)](part, out, slabs, N, BLOCK_P=32, BLOCK_N=64)
    return out

"""min_p_sampling with every row split across many programs.

At decode the batch is small (16-64 rows), and the baseline gives each row one program that makes
three sequential passes over the row (max, kept sum, write): 32 rows keep 32 of the GPU's 132 SMs
busy, each streaming about 1 MB per pass through one program's loads. Here each row is cut into
NCHUNK slices (about 4 programs per SM in all) and the three passes become three launches over
(row, slice): slice maxima; each program reduces its row's maxima and sums its kept terms; each
program reduces the sums and writes its slice. The row is still read three times, but by the whole
GPU, and the second and third reads come mostly from L2.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _max_kernel(x_ptr, pmax_ptr, V, CHUNK, NCHUNK, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    offs = tl.arange(0, BLOCK)
    lo = c * CHUNK
    hi = tl.minimum(lo + CHUNK, V)
    mx = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(lo, hi, BLOCK):
        cols = start + offs
        mx = tl.maximum(mx, tl.load(x_ptr + row * V + cols, mask=cols < hi, other=float("-inf")).to(tl.float32))
    tl.store(pmax_ptr + row * NCHUNK + c, tl.max(mx, axis=0))


@triton.jit
def _row_max(pmax_ptr, row, NCHUNK, BLOCK_C: tl.constexpr):
    cs = tl.arange(0, BLOCK_C)
    return tl.max(tl.load(pmax_ptr + row * NCHUNK + cs, mask=cs < NCHUNK, other=float("-inf")), axis=0)


@triton.jit
def _sum_kernel(x_ptr, t_ptr, lmp_ptr, pmax_ptr, psum_ptr, V, CHUNK, NCHUNK, BLOCK_C: tl.constexpr,
                BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    m = _row_max(pmax_ptr, row, NCHUNK, BLOCK_C)
    t = tl.load(t_ptr + row)
    thr = t * tl.load(lmp_ptr + row)
    offs = tl.arange(0, BLOCK)
    lo = c * CHUNK
    hi = tl.minimum(lo + CHUNK, V)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(lo, hi, BLOCK):
        cols = start + offs
        d = tl.load(x_ptr + row * V + cols, mask=cols < hi, other=float("-inf")).to(tl.float32) - m
        acc += tl.where(d >= thr, tl.exp(d / t), 0.0)
    tl.store(psum_ptr + row * NCHUNK + c, tl.sum(acc, axis=0))


@triton.jit
def _write_kernel(x_ptr, t_ptr, lmp_ptr, pmax_ptr, psum_ptr, out_ptr, V, CHUNK, NCHUNK, BLOCK_C: tl.constexpr,
                  BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    m = _row_max(pmax_ptr, row, NCHUNK, BLOCK_C)
    cs = tl.arange(0, BLOCK_C)
    inv = 1.0 / tl.sum(tl.load(psum_ptr + row * NCHUNK + cs, mask=cs < NCHUNK, other=0.0), axis=0)
    t = tl.load(t_ptr + row)
    thr = t * tl.load(lmp_ptr + row)
    offs = tl.arange(0, BLOCK)
    lo = c * CHUNK
    hi = tl.minimum(lo + CHUNK, V)
    for start in range(lo, hi, BLOCK):
        cols = start + offs
        mask = cols < hi
        d = tl.load(x_ptr + row * V + cols, mask=mask, other=float("-inf")).to(tl.float32) - m
        tl.store(out_ptr + row * V + cols, tl.where(d >= thr, tl.exp(d / t) * inv, 0.0), mask=mask)


def min_p_sampling(logits, temperature, log_min_p):
    M, V = logits.shape
    out = torch.empty((M, V), dtype=torch.float32, device=logits.device)
    block = 1024
    nchunk = max(1, min(triton.cdiv(528, M), triton.cdiv(V, block)))
    chunk = triton.cdiv(triton.cdiv(V, nchunk), block) * block
    nchunk = triton.cdiv(V, chunk)
    pmax = torch.empty((M, nchunk), dtype=torch.float32, device=logits.device)
    psum = torch.empty((M, nchunk), dtype=torch.float32, device=logits.device)
    block_c = triton.next_power_of_2(nchunk)
    grid = (M, nchunk)
    _max_kernel[grid](logits, pmax, V, chunk, nchunk, BLOCK=block, num_warps=4)
    _sum_kernel[grid](logits, temperature, log_min_p, pmax, psum, V, chunk, nchunk, BLOCK_C=block_c, BLOCK=block,
                      num_warps=4)
    _write_kernel[grid](logits, temperature, log_min_p, pmax, psum, out, V, chunk, nchunk, BLOCK_C=block_c,
                        BLOCK=block, num_warps=4)
    return out

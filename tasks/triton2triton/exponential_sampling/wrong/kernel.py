"""exponential_sampling with each row's argmax split across the vocabulary, whose per-lane running
best lets a later column replace an equal quotient (ties go to a larger column within a lane)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _partial_kernel(p_ptr, q_ptr, pval_ptr, pidx_ptr, V, CHUNK, NCHUNK, BLOCK: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    offs = tl.arange(0, BLOCK)
    best = tl.full([BLOCK], -1.0, dtype=tl.float32)
    best_idx = tl.zeros([BLOCK], dtype=tl.int32)
    lo = c * CHUNK
    hi = tl.minimum(lo + CHUNK, V)
    for start in range(lo, hi, BLOCK):
        cols = start + offs
        mask = cols < hi
        p = tl.load(p_ptr + b * V + cols, mask=mask, other=0.0)
        q = tl.load(q_ptr + b * V + cols, mask=mask, other=1.0)
        s = tl.where(mask, tl.div_rn(p, q), -1.0)
        best_idx = tl.where(s >= best, cols, best_idx)
        best = tl.maximum(best, s)
    m = tl.max(best, axis=0)
    i = tl.min(tl.where(best == m, best_idx, V), axis=0)
    tl.store(pval_ptr + b * NCHUNK + c, m)
    tl.store(pidx_ptr + b * NCHUNK + c, i)


@triton.jit
def _combine_kernel(pval_ptr, pidx_ptr, out_ptr, V, NCHUNK, BLOCK_C: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cs = tl.arange(0, BLOCK_C)
    cmask = cs < NCHUNK
    vals = tl.load(pval_ptr + b * NCHUNK + cs, mask=cmask, other=-2.0)
    idxs = tl.load(pidx_ptr + b * NCHUNK + cs, mask=cmask, other=V)
    m = tl.max(vals, axis=0)
    # Chunks are in column order: among the chunks holding the maximum, the smallest column wins.
    tl.store(out_ptr + b, tl.min(tl.where(vals == m, idxs, V), axis=0))


def exponential_sampling(probs, q):
    B, V = probs.shape
    out = torch.empty((B,), dtype=torch.int32, device=probs.device)
    block = 1024
    # About four programs per SM of a large GPU, each over at least four blocks of columns.
    nchunk = max(1, min(triton.cdiv(528, B), triton.cdiv(V, 4 * block)))
    chunk = triton.cdiv(triton.cdiv(V, nchunk), block) * block
    nchunk = triton.cdiv(V, chunk)
    pval = torch.empty((B, nchunk), dtype=torch.float32, device=probs.device)
    pidx = torch.empty((B, nchunk), dtype=torch.int32, device=probs.device)
    _partial_kernel[(B, nchunk)](probs, q, pval, pidx, V, chunk, nchunk, BLOCK=block, num_warps=4)
    _combine_kernel[(B,)](pval, pidx, out, V, nchunk, BLOCK_C=triton.next_power_of_2(nchunk), num_warps=1)
    return out

"""spec_decode_verify with the recovered-token argmax split across the vocabulary.

The baseline runs one program per sequence, which finds the first rejected draft position and then
streams that position's target row, draft row and noise row (three V-long float32 rows, 1.5 MB at
V = 128256) through a single program: with a decode batch of 32-64 sequences, well under one
program per SM streams memory and most of the GPU idles. Here the work is split in two launches:
the first has B x NCHUNK programs, each of which recomputes its sequence's accepted prefix (K
scalar loads, cached) and, for a rejected sequence, reduces its own V / NCHUNK slice of the
rejected row to a (max, first index) pair; the second combines the NCHUNK pairs per sequence and
writes the output row. Every SM streams, so the rows are read at close to full bandwidth.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _accepted(ids_ptr, q_ptr, p_ptr, u_ptr, b, K, V, BLOCK_K: tl.constexpr):
    ks = tl.arange(0, BLOCK_K)
    kmask = ks < K
    d = tl.load(ids_ptr + b * K + ks, mask=kmask, other=0)
    rows = (b * K + ks) * V + d
    p = tl.load(p_ptr + rows, mask=kmask, other=0.0)
    q = tl.load(q_ptr + rows, mask=kmask, other=0.0)
    u = tl.load(u_ptr + b * K + ks, mask=kmask, other=0.0)
    reject = kmask & (u * q > p)
    return tl.min(tl.where(reject, ks, K), axis=0), d, ks


@triton.jit
def _partial_kernel(ids_ptr, q_ptr, p_ptr, u_ptr, noise_ptr, pval_ptr, pidx_ptr, K, V, CHUNK, NCHUNK,
                    BLOCK_K: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    a, _, _ = _accepted(ids_ptr, q_ptr, p_ptr, u_ptr, b, K, V, BLOCK_K)
    if a < K:
        row = (b * K + a) * V
        offs = tl.arange(0, BLOCK)
        best = tl.full([BLOCK], -1.0, dtype=tl.float32)
        best_idx = tl.zeros([BLOCK], dtype=tl.int32)
        lo = c * CHUNK
        hi = tl.minimum(lo + CHUNK, V)
        for start in range(lo, hi, BLOCK):
            cols = start + offs
            mask = cols < hi
            pv = tl.load(p_ptr + row + cols, mask=mask, other=0.0)
            qv = tl.load(q_ptr + row + cols, mask=mask, other=0.0)
            nv = tl.load(noise_ptr + b * V + cols, mask=mask, other=0.0)
            s = tl.where(mask, tl.maximum(pv - qv, 0.0) * nv, -1.0)
            # Per lane: later columns replace only a strictly larger value (the first index wins ties).
            best_idx = tl.where(s > best, cols, best_idx)
            best = tl.maximum(best, s)
        m = tl.max(best, axis=0)
        i = tl.min(tl.where(best == m, best_idx, V), axis=0)
        tl.store(pval_ptr + b * NCHUNK + c, m)
        tl.store(pidx_ptr + b * NCHUNK + c, i)


@triton.jit
def _combine_kernel(ids_ptr, q_ptr, p_ptr, u_ptr, bonus_ptr, pval_ptr, pidx_ptr, out_ptr, K, V, NCHUNK,
                    BLOCK_K: tl.constexpr, BLOCK_C: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    a, d, ks = _accepted(ids_ptr, q_ptr, p_ptr, u_ptr, b, K, V, BLOCK_K)
    cs = tl.arange(0, BLOCK_C)
    cmask = (cs < NCHUNK) & (a < K)
    vals = tl.load(pval_ptr + b * NCHUNK + cs, mask=cmask, other=-2.0)
    idxs = tl.load(pidx_ptr + b * NCHUNK + cs, mask=cmask, other=0)
    m = tl.max(vals, axis=0)
    # Chunks are in column order: the first chunk holding the maximum has the smallest index.
    rec = tl.min(tl.where(vals == m, idxs, V), axis=0)
    last = tl.where(a < K, rec, tl.load(bonus_ptr + b))
    out = tl.where(ks < a, d, tl.where(ks == a, last, -1))
    tl.store(out_ptr + b * (K + 1) + ks, out, mask=ks < K)
    tl.store(out_ptr + b * (K + 1) + K, tl.where(a == K, last, -1))


def spec_decode_verify(draft_ids, draft_probs, target_probs, uniform, noise, bonus_ids):
    B, K = draft_ids.shape
    V = draft_probs.shape[2]
    out = torch.empty((B, K + 1), dtype=torch.int32, device=draft_ids.device)
    block = 1024
    # About four programs per SM of a large GPU, each over at least one block of columns.
    nchunk = max(1, min(triton.cdiv(528, B), triton.cdiv(V, block)))
    chunk = triton.cdiv(triton.cdiv(V, nchunk), block) * block
    nchunk = triton.cdiv(V, chunk)
    pval = torch.empty((B, nchunk), dtype=torch.float32, device=draft_ids.device)
    pidx = torch.empty((B, nchunk), dtype=torch.int32, device=draft_ids.device)
    block_k = triton.next_power_of_2(K)
    _partial_kernel[(B, nchunk)](draft_ids, draft_probs, target_probs, uniform, noise, pval, pidx, K, V, chunk,
                                 nchunk, BLOCK_K=block_k, BLOCK=block, num_warps=4)
    _combine_kernel[(B,)](draft_ids, draft_probs, target_probs, uniform, bonus_ids, pval, pidx, out, K, V, nchunk,
                          BLOCK_K=block_k, BLOCK_C=triton.next_power_of_2(nchunk), num_warps=1)
    return out

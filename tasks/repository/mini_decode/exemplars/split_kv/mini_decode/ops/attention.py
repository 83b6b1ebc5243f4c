"""decode_attention split over the sequence, one program per KV head for its whole query group.

The baseline runs one program per (sequence, query head) that walks the whole cache 64 tokens at
a time: with a few sequences that is 128 programs, about one per SM, each a long chain of
dependent loads, and every query head of a group reads its KV head's cache again.
Headroom: the baseline's parallelism is B * HQ programs whatever the context length; splitting
the sequence gives enough programs to fill the GPU, so at B = 4 and 16k tokens the speedup is
bounded by the cache bandwidth, not by one program's walk.
Here a (sequence * KV head, split) grid processes a slice of the cache for all the group's query
heads at once (a tl.dot tile of 16 padded rows) and writes a float32 (max, sum, weighted sum)
partial per query head and split; a second kernel adds the new token, merges the partials
rescaled to the common maximum and writes o.
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _split_kernel(q_ptr, k_cache_ptr, v_cache_ptr, pos_ptr, pm_ptr, pl_ptr, pacc_ptr, sm_scale, HQ, HKV, CTX, CHUNK,
                  SPLITS, GROUP: tl.constexpr, GPAD: tl.constexpr, D: tl.constexpr, BLOCK_N: tl.constexpr,
                  IEEE: tl.constexpr):
    bkv = tl.program_id(0)
    split = tl.program_id(1)
    b = bkv // HKV
    kv_head = bkv % HKV
    length = tl.load(pos_ptr + b)
    start = split * CHUNK
    end = tl.minimum(start + CHUNK, length)
    g = tl.arange(0, GPAD)
    gmask = g < GROUP
    heads = kv_head * GROUP + g
    cols = tl.arange(0, D)
    q = tl.load(q_ptr + (b * HQ + heads)[:, None] * D + cols[None, :], mask=gmask[:, None], other=0.0)
    cache_off = bkv.to(tl.int64) * CTX * D
    m_i = tl.full([GPAD], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([GPAD], dtype=tl.float32)
    acc = tl.zeros([GPAD, D], dtype=tl.float32)
    for n0 in range(start, end, BLOCK_N):
        rows = n0 + tl.arange(0, BLOCK_N)
        valid = rows < end
        offs = cache_off + rows[:, None] * D + cols[None, :]
        k = tl.load(k_cache_ptr + offs, mask=valid[:, None], other=0.0)
        if IEEE:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        else:
            s = tl.dot(q, tl.trans(k))
        s = tl.where(valid[None, :], s * sm_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        v = tl.load(v_cache_ptr + offs, mask=valid[:, None], other=0.0)
        if IEEE:
            pv = tl.dot(p, v, input_precision="ieee")
        else:
            pv = tl.dot(p.to(v.dtype), v)
        acc = acc * alpha[:, None] + pv
        l_i = l_i * alpha + tl.sum(p, axis=1)
        m_i = m_new
    slot = (b * HQ + heads) * SPLITS + split
    tl.store(pm_ptr + slot, m_i, mask=gmask)
    tl.store(pl_ptr + slot, l_i, mask=gmask)
    tl.store(pacc_ptr + slot[:, None] * D + cols[None, :], acc, mask=gmask[:, None])


@triton.jit
def _combine_kernel(q_ptr, k_new_ptr, v_new_ptr, pm_ptr, pl_ptr, pacc_ptr, o_ptr, sm_scale, HQ, HKV, SPLITS,
                    GROUP: tl.constexpr, SPAD: tl.constexpr, D: tl.constexpr):
    bh = tl.program_id(0)
    b = bh // HQ
    kv_head = (bh % HQ) // GROUP
    cols = tl.arange(0, D)
    sp = tl.arange(0, SPAD)
    smask = sp < SPLITS
    m = tl.load(pm_ptr + bh * SPLITS + sp, mask=smask, other=float("-inf"))
    l_part = tl.load(pl_ptr + bh * SPLITS + sp, mask=smask, other=0.0)
    acc = tl.load(pacc_ptr + (bh * SPLITS + sp)[:, None] * D + cols[None, :], mask=smask[:, None], other=0.0)
    q = tl.load(q_ptr + bh * D + cols).to(tl.float32)
    k = tl.load(k_new_ptr + (b * HKV + kv_head) * D + cols).to(tl.float32)
    v = tl.load(v_new_ptr + (b * HKV + kv_head) * D + cols).to(tl.float32)
    s_new = tl.sum(q * k, axis=0) * sm_scale
    m_all = tl.maximum(tl.max(m, axis=0), s_new)
    w = tl.where(m == float("-inf"), 0.0, tl.exp(m - m_all))
    p_new = tl.exp(s_new - m_all)
    total = tl.sum(l_part * w, axis=0) + p_new
    out = (tl.sum(acc * w[:, None], axis=0) + p_new * v) / total
    tl.store(o_ptr + bh * D + cols, out.to(o_ptr.dtype.element_ty))


def decode_attention(q: torch.Tensor, k_new: torch.Tensor, v_new: torch.Tensor, k_cache: torch.Tensor,
                     v_cache: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    B, HQ, D = q.shape
    HKV, CTX = k_cache.shape[1], k_cache.shape[2]
    group = HQ // HKV
    block_n = 64
    # Enough splits for about four programs per SM on a 132-SM GPU, each at least 128 tokens long.
    splits = max(1, min(triton.cdiv(528, B * HKV), triton.cdiv(CTX, 128)))
    chunk = triton.cdiv(triton.cdiv(CTX, splits), block_n) * block_n
    splits = triton.cdiv(CTX, chunk)
    pm = torch.empty((B * HQ * splits,), dtype=torch.float32, device=q.device)
    pl = torch.empty_like(pm)
    pacc = torch.empty((B * HQ * splits, D), dtype=torch.float32, device=q.device)
    o = torch.empty_like(q)
    sm_scale = 1.0 / math.sqrt(D)
    _split_kernel[(B * HKV, splits)](q, k_cache, v_cache, positions, pm, pl, pacc, sm_scale, HQ, HKV, CTX, chunk,
                                     splits, GROUP=group, GPAD=max(16, triton.next_power_of_2(group)), D=D,
                                     BLOCK_N=block_n, IEEE=q.dtype == torch.float32, num_warps=4, num_stages=3)
    _combine_kernel[(B * HQ,)](q, k_new, v_new, pm, pl, pacc, o, sm_scale, HQ, HKV, splits, GROUP=group,
                               SPAD=max(2, triton.next_power_of_2(splits)), D=D, num_warps=4)
    return o

"""paged_decode_attention with split-KV (flash-decoding) and 4-page steps.

The baseline runs one program per (sequence, KV head), walking the context one 16-token page per
step: with 8 sequences x 8 KV heads that is 64 programs for a 132-SM GPU, each streaming up to
16k tokens of keys and values alone, and every step pays the softmax bookkeeping for 16 tokens.
Here each step gathers 64 tokens (4 pages), and the context is split across programs until there
are about 512 of them; a second kernel merges the splits by their log-sum-exp.
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _split_kernel(q_ptr, k_ptr, v_ptr, bt_ptr, lens_ptr, o_ptr, part_o_ptr, part_lse_ptr,
                  qk_scale, HQ, HKV, MAXB, SPLIT_TOKENS,
                  D: tl.constexpr, BS: tl.constexpr, GROUP: tl.constexpr, GPAD: tl.constexpr,
                  BLOCK_N: tl.constexpr, SPLITS: tl.constexpr, IEEE: tl.constexpr):
    b = tl.program_id(0)
    kvh = tl.program_id(1)
    split = tl.program_id(2)
    seq_len = tl.load(lens_ptr + b)
    start = split * SPLIT_TOKENS
    end = tl.minimum(start + SPLIT_TOKENS, seq_len)
    offs_g = tl.arange(0, GPAD)
    offs_d = tl.arange(0, D)
    heads = kvh * GROUP + offs_g
    gmask = offs_g < GROUP
    q = tl.load(q_ptr + (b * HQ + heads)[:, None] * D + offs_d[None, :], mask=gmask[:, None], other=0.0)
    m_i = tl.full([GPAD], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([GPAD], dtype=tl.float32)
    acc = tl.zeros([GPAD, D], dtype=tl.float32)
    for n0 in range(start, end, BLOCK_N):
        tok = n0 + tl.arange(0, BLOCK_N)
        valid = tok < end
        page = tl.load(bt_ptr + b * MAXB + tok // BS, mask=valid, other=0).to(tl.int64)
        row = (page * BS + tok % BS) * HKV + kvh
        kt = tl.load(k_ptr + row[None, :] * D + offs_d[:, None], mask=valid[None, :], other=0.0)
        if IEEE:
            s = tl.dot(q, kt, input_precision="ieee") * qk_scale
        else:
            s = tl.dot(q, kt) * qk_scale
        s = tl.where(valid[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + row[:, None] * D + offs_d[None, :], mask=valid[:, None], other=0.0)
        if IEEE:
            acc = tl.dot(p, v, acc * alpha[:, None], input_precision="ieee")
        else:
            acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    nonempty = l_i > 0.0
    out = tl.where(nonempty[:, None], acc / tl.where(nonempty, l_i, 1.0)[:, None], 0.0)
    if SPLITS == 1:
        tl.store(o_ptr + (b * HQ + heads)[:, None] * D + offs_d[None, :], out.to(o_ptr.dtype.element_ty),
                 mask=gmask[:, None])
    else:
        slot = (b * HQ + heads) * SPLITS + split
        tl.store(part_o_ptr + slot[:, None] * D + offs_d[None, :], out, mask=gmask[:, None])
        lse = tl.where(nonempty, m_i + tl.math.log2(tl.where(nonempty, l_i, 1.0)), float("-inf"))
        tl.store(part_lse_ptr + slot, lse, mask=gmask)


@triton.jit
def _merge_kernel(part_o_ptr, part_lse_ptr, o_ptr, D: tl.constexpr, SPLITS: tl.constexpr,
                  SPAD: tl.constexpr):
    bh = tl.program_id(0).to(tl.int64)
    offs_s = tl.arange(0, SPAD)
    offs_d = tl.arange(0, D)
    smask = offs_s < SPLITS
    lse = tl.load(part_lse_ptr + bh * SPLITS + offs_s, mask=smask, other=float("-inf"))
    w = tl.math.exp2(lse - tl.max(lse, axis=0))
    parts = tl.load(part_o_ptr + (bh * SPLITS + offs_s)[:, None] * D + offs_d[None, :], mask=smask[:, None],
                    other=0.0)
    out = tl.sum(w[:, None] * parts, axis=0) / tl.sum(w, axis=0)
    tl.store(o_ptr + bh * D + offs_d, out.to(o_ptr.dtype.element_ty))


def paged_decode_attention(q, k_cache, v_cache, block_tables, seq_lens):
    B, HQ, D = q.shape
    BS, HKV = k_cache.shape[1], k_cache.shape[2]
    MAXB = block_tables.shape[1]
    group = HQ // HKV
    gpad = max(16, triton.next_power_of_2(group))
    block_n = 64
    # Enough programs to fill the GPU: split the longest possible context across programs.
    max_ctx = MAXB * BS
    splits = max(1, min(triton.cdiv(512, B * HKV), triton.cdiv(max_ctx, 256)))
    split_tokens = triton.cdiv(triton.cdiv(max_ctx, splits), block_n) * block_n
    splits = triton.cdiv(max_ctx, split_tokens)
    o = torch.empty_like(q)
    if splits > 1:
        part_o = torch.empty((B, HQ, splits, D), dtype=torch.float32, device=q.device)
        part_lse = torch.empty((B, HQ, splits), dtype=torch.float32, device=q.device)
    else:
        part_o = part_lse = o
    qk_scale = 1.0 / math.sqrt(D) * 1.4426950408889634  # log2(e): exp2 instead of exp
    ieee = q.dtype == torch.float32
    _split_kernel[(B, HKV, splits)](q, k_cache, v_cache, block_tables, seq_lens, o, part_o, part_lse,
                                    qk_scale, HQ, HKV, MAXB, split_tokens, D=D, BS=BS, GROUP=group,
                                    GPAD=gpad, BLOCK_N=block_n, SPLITS=splits, IEEE=ieee,
                                    num_warps=4, num_stages=2)
    if splits > 1:
        _merge_kernel[(B * HQ,)](part_o, part_lse, o, D=D, SPLITS=splits,
                                 SPAD=triton.next_power_of_2(splits), num_warps=4)
    return o

"""paged_decode_attention: one decode step of attention over a paged KV cache (GQA)."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _decode_kernel(q_ptr, k_ptr, v_ptr, bt_ptr, lens_ptr, o_ptr, qk_scale, HQ, HKV, MAXB,
                   D: tl.constexpr, BS: tl.constexpr, GROUP: tl.constexpr, GPAD: tl.constexpr,
                   IEEE: tl.constexpr):
    # One program per (sequence, KV head): the GROUP query heads that share the KV head are one
    # [GPAD, D] tile (padded to 16 rows for tl.dot), and the sequence is walked one page at a time.
    b = tl.program_id(0)
    kvh = tl.program_id(1)
    seq_len = tl.load(lens_ptr + b)
    offs_g = tl.arange(0, GPAD)
    offs_d = tl.arange(0, D)
    offs_t = tl.arange(0, BS)
    heads = kvh * GROUP + offs_g
    gmask = offs_g < GROUP
    q = tl.load(q_ptr + (b * HQ + heads)[:, None] * D + offs_d[None, :], mask=gmask[:, None], other=0.0)
    m_i = tl.full([GPAD], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([GPAD], dtype=tl.float32)
    acc = tl.zeros([GPAD, D], dtype=tl.float32)
    for p in range(0, tl.cdiv(seq_len, BS)):
        page = tl.load(bt_ptr + b * MAXB + p).to(tl.int64)
        valid = p * BS + offs_t < seq_len
        rows = (page * BS + offs_t) * HKV + kvh
        kt = tl.load(k_ptr + rows[None, :] * D + offs_d[:, None], mask=valid[None, :], other=0.0)
        if IEEE:
            s = tl.dot(q, kt, input_precision="ieee") * qk_scale
        else:
            s = tl.dot(q, kt) * qk_scale
        s = tl.where(valid[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p_ij = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p_ij, axis=1)
        v = tl.load(v_ptr + rows[:, None] * D + offs_d[None, :], mask=valid[:, None], other=0.0)
        if IEEE:
            acc = tl.dot(p_ij, v, acc * alpha[:, None], input_precision="ieee")
        else:
            acc = tl.dot(p_ij.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + (b * HQ + heads)[:, None] * D + offs_d[None, :], out.to(o_ptr.dtype.element_ty),
             mask=gmask[:, None])


def paged_decode_attention(q, k_cache, v_cache, block_tables, seq_lens):
    """Attention of each query head over its sequence's cached keys and values; returns (B, HQ, D)."""
    B, HQ, D = q.shape
    BS, HKV = k_cache.shape[1], k_cache.shape[2]
    group = HQ // HKV
    o = torch.empty_like(q)
    qk_scale = 1.0 / math.sqrt(D) * 1.4426950408889634  # log2(e): exp2 instead of exp
    _decode_kernel[(B, HKV)](q, k_cache, v_cache, block_tables, seq_lens, o, qk_scale, HQ, HKV,
                             block_tables.shape[1], D=D, BS=BS, GROUP=group, GPAD=max(16, triton.next_power_of_2(group)),
                             IEEE=q.dtype == torch.float32)
    return o

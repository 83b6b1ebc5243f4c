"""paged_decode_attention: one decode step of attention over a paged KV cache (GQA)."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _decode_kernel(q_ptr, k_ptr, v_ptr, bt_ptr, lens_ptr, o_ptr, scale, HQ, HKV, MAXB,
                   D: tl.constexpr, BS: tl.constexpr, GROUP: tl.constexpr, BLOCK_N: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    kvh = h // GROUP
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + (b * HQ + h) * D + offs_d).to(tl.float32) * scale
    seq_len = tl.load(lens_ptr + b)
    m_i = float("-inf")
    l_i = 0.0
    acc = tl.zeros([D], dtype=tl.float32)
    for n0 in range(0, seq_len, BLOCK_N):
        tok = n0 + tl.arange(0, BLOCK_N)
        valid = tok < seq_len
        page = tl.load(bt_ptr + b * MAXB + tok // BS, mask=valid, other=0).to(tl.int64)
        row = (page * BS + tok % BS) * HKV + kvh
        k = tl.load(k_ptr + row[:, None] * D + offs_d[None, :], mask=valid[:, None], other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], axis=1)
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m_i - m_new)
        v = tl.load(v_ptr + row[:, None] * D + offs_d[None, :], mask=valid[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        m_i = m_new
    tl.store(o_ptr + (b * HQ + h) * D + offs_d, (acc / l_i).to(o_ptr.dtype.element_ty))


def paged_decode_attention(q, k_cache, v_cache, block_tables, seq_lens):
    """Attention of each query head over its sequence's cached keys and values; returns (B, HQ, D)."""
    B, HQ, D = q.shape
    BS, HKV = k_cache.shape[1], k_cache.shape[2]
    o = torch.empty_like(q)
    _decode_kernel[(B, HQ)](q, k_cache, v_cache, block_tables, seq_lens, o, 1.0 / math.sqrt(D),
                            HQ, HKV, block_tables.shape[1], D=D, BS=BS, GROUP=HQ // HKV, BLOCK_N=32)
    return o

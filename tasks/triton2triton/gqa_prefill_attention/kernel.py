"""gqa_prefill_attention: causal flash attention for grouped-query attention (prefill)."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, sm_scale, HQ, HKV, D: tl.constexpr, IEEE: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // HQ
    h = bh % HQ
    kvh = h // (HQ // HKV)
    q_base = (bh.to(tl.int64) * S) * D
    kv_base = ((b * HKV + kvh).to(tl.int64) * S) * D
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + q_base + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    hi = tl.minimum((pid_m + 1) * BLOCK_M, S)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kt = tl.load(k_ptr + kv_base + offs_n[None, :] * D + offs_d[:, None], mask=offs_n[None, :] < S, other=0.0)
        if IEEE:
            s = tl.dot(q, kt, input_precision="ieee") * sm_scale
        else:
            s = tl.dot(q, kt) * sm_scale
        s = tl.where((offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < S), s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + kv_base + offs_n[:, None] * D + offs_d[None, :], mask=offs_n[:, None] < S, other=0.0)
        if IEEE:
            acc = tl.dot(p, v, acc * alpha[:, None], input_precision="ieee")
        else:
            acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(o_ptr + q_base + offs_m[:, None] * D + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < S)


def gqa_prefill_attention(q, k, v):
    """Causal attention of (B, HQ, S, D) queries over (B, HKV, S, D) keys and values; (B, HQ, S, D) out."""
    B, HQ, S, D = q.shape
    HKV = k.shape[1]
    o = torch.empty_like(q)
    block_m, block_n = 64, 32
    grid = (triton.cdiv(S, block_m), B * HQ)
    _attn_kernel[grid](q, k, v, o, S, 1.0 / math.sqrt(D), HQ, HKV, D=D, IEEE=q.dtype == torch.float32,
                       BLOCK_M=block_m, BLOCK_N=block_n)
    return o

"""Single-query attention for a decode step over a contiguous per-sequence KV cache."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _decode_attention_kernel(q_ptr, k_new_ptr, v_new_ptr, k_cache_ptr, v_cache_ptr, pos_ptr, o_ptr, sm_scale,
                             HQ, HKV, CTX, D: tl.constexpr, BLOCK_N: tl.constexpr):
    # One program per (sequence, query head): walks the sequence's cached tokens, then the new one.
    b = tl.program_id(0)
    h = tl.program_id(1)
    kv_head = h // (HQ // HKV)
    cols = tl.arange(0, D)
    q = tl.load(q_ptr + (b * HQ + h) * D + cols).to(tl.float32)
    length = tl.load(pos_ptr + b)
    cache_off = (b.to(tl.int64) * HKV + kv_head) * CTX * D
    m_i = tl.full([], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([], dtype=tl.float32)
    acc = tl.zeros([D], dtype=tl.float32)
    for start in range(0, length, BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        valid = rows < length
        offs = cache_off + rows[:, None] * D + cols[None, :]
        k = tl.load(k_cache_ptr + offs, mask=valid[:, None], other=0.0).to(tl.float32)
        s = tl.where(valid, tl.sum(k * q[None, :], axis=1) * sm_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m_i - m_new)
        v = tl.load(v_cache_ptr + offs, mask=valid[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        m_i = m_new
    new_off = (b * HKV + kv_head) * D + cols
    k = tl.load(k_new_ptr + new_off).to(tl.float32)
    v = tl.load(v_new_ptr + new_off).to(tl.float32)
    s = tl.sum(k * q, axis=0) * sm_scale
    m_new = tl.maximum(m_i, s)
    alpha = tl.exp(m_i - m_new)
    p = tl.exp(s - m_new)
    acc = acc * alpha + p * v
    l_i = l_i * alpha + p
    tl.store(o_ptr + (b * HQ + h) * D + cols, (acc / l_i).to(o_ptr.dtype.element_ty))


def decode_attention(q: torch.Tensor, k_new: torch.Tensor, v_new: torch.Tensor, k_cache: torch.Tensor,
                     v_cache: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """o[b, h] = softmax(q[b, h] . K^T / sqrt(D)) V over the keys and values of KV head
    h // (HQ / HKV): the positions[b] cached tokens k_cache[b, kv, :positions[b]] followed by the
    new token k_new[b, kv] (same for v). q (B, HQ, D); k_new, v_new (B, HKV, D); the caches
    (B, HKV, CTX, D); positions (B,) int32 with 0 <= positions[b] <= CTX. Softmax and the weighted
    sum in float32; o (B, HQ, D) of q's dtype."""
    B, HQ, D = q.shape
    HKV, CTX = k_cache.shape[1], k_cache.shape[2]
    o = torch.empty_like(q)
    _decode_attention_kernel[(B, HQ)](q, k_new, v_new, k_cache, v_cache, positions, o, 1.0 / math.sqrt(D),
                                      HQ, HKV, CTX, D=D, BLOCK_N=64, num_warps=4)
    return o

"""block_sparse_attention: attention restricted to the (query block, key block) pairs of a layout."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _bsa_kernel(
    q_ptr, k_ptr, v_ptr, lay_ptr, o_ptr, H, S, NB, scale, D: tl.constexpr, IEEE: tl.constexpr, BLOCK: tl.constexpr
):
    qb = tl.program_id(0)
    bh = tl.program_id(1)
    h = bh % H
    base = bh.to(tl.int64) * S * D
    offs_m = qb * BLOCK + tl.arange(0, BLOCK)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK], dtype=tl.float32)
    acc = tl.zeros([BLOCK, D], dtype=tl.float32)
    for kb in range(0, NB):
        attend = tl.load(lay_ptr + (h * NB + qb) * NB + kb) != 0
        offs_n = kb * BLOCK + tl.arange(0, BLOCK)
        k = tl.load(k_ptr + base + offs_n[None, :] * D + offs_d[:, None])
        v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :])
        if IEEE:
            s = tl.dot(q, k, input_precision="ieee") * scale
        else:
            s = tl.dot(q, k) * scale
        s = tl.where(attend, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        # Rows that have seen no attended key yet stay at -inf; keep their terms at zero.
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_safe)
        p = tl.exp(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        if IEEE:
            acc = tl.dot(p, v, acc, input_precision="ieee")
        else:
            acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    o = tl.where(l_i[:, None] > 0, acc / l_i[:, None], 0.0)
    tl.store(o_ptr + base + offs_m[:, None] * D + offs_d[None, :], o.to(o_ptr.dtype.element_ty))


def block_sparse_attention(q, k, v, layout):
    """(B, H, S, D) output of attention over the key blocks layout (H, S / 64, S / 64) allows."""
    B, H, S, D = q.shape
    NB = layout.shape[-1]
    o = torch.empty_like(q)
    _bsa_kernel[(NB, B * H)](
        q, k, v, layout, o, H, S, NB, 1.0 / math.sqrt(D), D=D, IEEE=q.dtype == torch.float32, BLOCK=64, num_warps=4
    )
    return o

"""Block-sparse attention that visits only the key blocks its layout lists.

The baseline walks every slot of a query block's lookup table (NB of them) and masks the slots
past the row's count, so each query block does the work of dense attention. Here the loop stops
at the row's count; programs are ordered head-fastest so the global query blocks (whose rows list
every key block) start first instead of trailing the launch, and the softmax runs in base 2 with
the scale folded into one multiply.

Headroom: the layout is sparse by design (at S=8192 a query block lists about 8 of its 128 key
blocks; only the global block lists all), and the baseline computes every slot of the table and
masks the padding, so visiting only the listed blocks cuts the attention work about 16x.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _block_sparse_attention_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    counts_ptr,
    cols_ptr,
    H,
    S,
    NB,
    qk_scale,
    D: tl.constexpr,
    BLOCK: tl.constexpr,
    IEEE: tl.constexpr,
):
    bh = tl.program_id(0)
    i = tl.program_id(1)
    b = bh // H
    h = bh % H
    base = bh.to(tl.int64) * S * D
    offs_m = i * BLOCK + tl.arange(0, BLOCK)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)

    table = (h * NB + i).to(tl.int64)
    count = tl.load(counts_ptr + table)
    m_i = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK], dtype=tl.float32)
    acc = tl.zeros([BLOCK, D], dtype=tl.float32)
    for t in range(0, count):
        kb = tl.load(cols_ptr + table * NB + t)
        offs_n = kb * BLOCK + tl.arange(0, BLOCK)
        kv_mask = offs_n < S
        k = tl.load(k_ptr + base + offs_n[None, :] * D + offs_d[:, None], mask=kv_mask[None, :], other=0.0)
        v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :], mask=kv_mask[:, None], other=0.0)
        if IEEE:
            s = tl.dot(q, k, input_precision="ieee") * qk_scale
        else:
            s = tl.dot(q, k) * qk_scale
        s = tl.where(kv_mask[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if IEEE:
            acc = tl.dot(p, v, acc * alpha[:, None], input_precision="ieee")
        else:
            acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    o = acc / l_i[:, None]
    o_ptrs = o_ptr + ((b * S + offs_m.to(tl.int64))[:, None] * H + h) * D + offs_d[None, :]
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < S)


def block_sparse_attention(q, k, v, counts, columns, block_size, scale):
    B, H, S, D = q.shape
    NB = counts.shape[1]
    o = torch.empty((B, S, H, D), dtype=q.dtype, device=q.device)
    warps = 4 if block_size <= 64 else 8
    _block_sparse_attention_kernel[(B * H, NB)](
        q,
        k,
        v,
        o,
        counts,
        columns,
        H,
        S,
        NB,
        scale * 1.4426950408889634,
        D=D,
        BLOCK=block_size,
        IEEE=q.dtype == torch.float32,
        num_warps=warps,
        num_stages=2,
    )
    return o

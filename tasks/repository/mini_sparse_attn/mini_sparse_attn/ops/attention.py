"""Block-sparse attention over a lookup table of key blocks per query block."""

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
    scale,
    D: tl.constexpr,
    BLOCK: tl.constexpr,
    IEEE: tl.constexpr,
):
    i = tl.program_id(0)
    bh = tl.program_id(1)
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
    # Every slot of the row's table is visited; slots past `count` are masked out.
    for t in range(0, NB):
        kb = tl.load(cols_ptr + table * NB + t)
        offs_n = kb * BLOCK + tl.arange(0, BLOCK)
        kv_mask = offs_n < S
        k = tl.load(k_ptr + base + offs_n[None, :] * D + offs_d[:, None], mask=kv_mask[None, :], other=0.0)
        v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :], mask=kv_mask[:, None], other=0.0)
        if IEEE:
            s = tl.dot(q, k, input_precision="ieee") * scale
        else:
            s = tl.dot(q, k) * scale
        s = tl.where(kv_mask[None, :] & (t < count), s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if IEEE:
            acc = tl.dot(p, v, acc * alpha[:, None], input_precision="ieee")
        else:
            acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    o = acc / l_i[:, None]
    # Output in (B, S, H, D) order: the heads of a token side by side.
    o_ptrs = o_ptr + ((b * S + offs_m.to(tl.int64))[:, None] * H + h) * D + offs_d[None, :]
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < S)


def block_sparse_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    counts: torch.Tensor,
    columns: torch.Tensor,
    block_size: int,
    scale: float,
) -> torch.Tensor:
    """Attention of contiguous (B, H, S, D) q, k, v (D a power of two >= 16) where query block i of
    head h sees the key blocks columns[h, i, :counts[h, i]] (blocks of block_size tokens, a power
    of two >= 16; the last block may be partial). Returns (B, S, H, D) in q's dtype."""
    B, H, S, D = q.shape
    NB = counts.shape[1]
    o = torch.empty((B, S, H, D), dtype=q.dtype, device=q.device)
    _block_sparse_attention_kernel[(NB, B * H)](
        q, k, v, o, counts, columns, H, S, NB, scale, D=D, BLOCK=block_size, IEEE=q.dtype == torch.float32
    )
    return o

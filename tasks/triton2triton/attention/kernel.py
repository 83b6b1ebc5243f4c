"""attention: causal softmax(q k^T / sqrt(D)) v for (Z, S, D) tensors, one program per query block."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, scale, D: tl.constexpr, IEEE: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * S * D
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)
    hi = tl.minimum((pid_m + 1) * BLOCK_M, S)

    # Pass 1: the row maxima of the scaled scores.
    m = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + offs_n[None, :] * D + offs_d[:, None], mask=offs_n[None, :] < S, other=0.0)
        if IEEE:
            s = tl.dot(q, k, input_precision="ieee") * scale
        else:
            s = tl.dot(q, k) * scale
        s = tl.where((offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < S), s, float("-inf"))
        m = tl.maximum(m, tl.max(s, axis=1))

    # Pass 2: the normaliser and the weighted sum of values.
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + offs_n[None, :] * D + offs_d[:, None], mask=offs_n[None, :] < S, other=0.0)
        v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :], mask=offs_n[:, None] < S, other=0.0)
        if IEEE:
            s = tl.dot(q, k, input_precision="ieee") * scale
        else:
            s = tl.dot(q, k) * scale
        s = tl.where((offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < S), s, float("-inf"))
        p = tl.exp(s - m[:, None])
        l_i += tl.sum(p, axis=1)
        if IEEE:
            acc = tl.dot(p, v, acc, input_precision="ieee")
        else:
            acc = tl.dot(p.to(v.dtype), v, acc)
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * D + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < S)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention of contiguous (Z, S, D) tensors (D a power of two >= 16); returns (Z, S, D)."""
    Z, S, D = q.shape
    o = torch.empty_like(q)
    block = 32
    grid = (triton.cdiv(S, block), Z)
    _attention_kernel[grid](q, k, v, o, S, 1.0 / math.sqrt(D), D=D, IEEE=q.dtype == torch.float32,
                            BLOCK_M=block, BLOCK_N=block)
    return o

"""attention, online, forgetting to rescale the output accumulator when the running max grows."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _attend_block(acc, l_i, m_i, q, k_ptr, v_ptr, base, S, qk_scale, offs_m, offs_d, start_n,
                  D: tl.constexpr, IEEE: tl.constexpr, BLOCK_N: tl.constexpr, DIAGONAL: tl.constexpr):
    offs_n = start_n + tl.arange(0, BLOCK_N)
    if DIAGONAL:
        k = tl.load(k_ptr + base + offs_n[None, :] * D + offs_d[:, None], mask=offs_n[None, :] < S, other=0.0)
        v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :], mask=offs_n[:, None] < S, other=0.0)
    else:
        k = tl.load(k_ptr + base + offs_n[None, :] * D + offs_d[:, None])
        v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :])
    if IEEE:
        s = tl.dot(q, k, input_precision="ieee") * qk_scale
    else:
        s = tl.dot(q, k) * qk_scale
    if DIAGONAL:
        s = tl.where(offs_m[:, None] >= offs_n[None, :], s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    p = tl.math.exp2(s - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, axis=1)
    if IEEE:
        acc = tl.dot(p, v, acc, input_precision="ieee")
    else:
        acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, l_i, m_new


@triton.jit
def _attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, qk_scale, D: tl.constexpr, IEEE: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Heavy (late) query blocks first, so the tail of the launch holds the short ones.
    pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * S * D
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    diag_start = pid_m * BLOCK_M
    # Key blocks wholly below the diagonal: every key is visible and in range.
    for start_n in range(0, diag_start, BLOCK_N):
        acc, l_i, m_i = _attend_block(acc, l_i, m_i, q, k_ptr, v_ptr, base, S, qk_scale, offs_m, offs_d,
                                      start_n, D, IEEE, BLOCK_N, False)
    # Key blocks on the diagonal: causal and range masks.
    for start_n in range(diag_start, tl.minimum(diag_start + BLOCK_M, S), BLOCK_N):
        acc, l_i, m_i = _attend_block(acc, l_i, m_i, q, k_ptr, v_ptr, base, S, qk_scale, offs_m, offs_d,
                                      start_n, D, IEEE, BLOCK_N, True)
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * D + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < S)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    Z, S, D = q.shape
    o = torch.empty_like(q)
    if q.dtype == torch.float32:
        bm, bn, warps, stages = 64, 32, 4, 2
    else:
        bm, bn, warps, stages = 128, 64, 8 if D >= 128 else 4, 3
    qk_scale = 1.0 / math.sqrt(D) * 1.4426950408889634  # log2(e): exp2 instead of exp
    grid = (triton.cdiv(S, bm), Z)
    _attention_kernel[grid](q, k, v, o, S, qk_scale, D=D, IEEE=q.dtype == torch.float32,
                            BLOCK_M=bm, BLOCK_N=bn, num_warps=warps, num_stages=stages)
    return o

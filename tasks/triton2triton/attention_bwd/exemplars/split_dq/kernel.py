"""attention_bwd with larger blocks, the causal mask only on the diagonal blocks, and exp2.

The baseline runs the same two passes (dk and dv per key block, dq per query block, no atomics)
over 64 x 64 blocks, applying the causal tl.where to every block and taking tl.exp. Here, as in
FlashAttention-2's backward: each program holds 128 keys (dk, dv) or 128 queries (dq) and steps
through the other side 32 at a time, so it reloads its own block half as often and has more work
per program, with three pipeline stages; only the blocks that straddle the diagonal apply the
causal mask, the blocks strictly below it run unmasked; the exponent is taken base 2 (exp2 with
log2(e) folded into the scale and the log-sum-exp).
"""

import math

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _delta_kernel(o_ptr, do_ptr, delta_ptr, S, D: tl.constexpr, BLOCK_M: tl.constexpr):
    z = tl.program_id(1).to(tl.int64)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    ptrs = z * S * D + offs_m[:, None] * D + offs_d[None, :]
    mask = offs_m[:, None] < S
    o = tl.load(o_ptr + ptrs, mask=mask, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + ptrs, mask=mask, other=0.0).to(tl.float32)
    tl.store(delta_ptr + z * S + offs_m, tl.sum(o * do, axis=1), mask=offs_m < S)


@triton.jit
def _dkdv_step(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, zs, start_m, offs_n, S, qk_scale,
               D: tl.constexpr, IEEE: tl.constexpr, MASK: tl.constexpr, BLOCK_M: tl.constexpr):
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    m_ok = offs_m < S
    # q^T and dO for this query block; rows past S load as 0 and contribute nothing.
    qT = tl.load(q_ptr + base + offs_m[None, :] * D + offs_d[:, None], mask=m_ok[None, :], other=0.0)
    do = tl.load(do_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=m_ok[:, None], other=0.0)
    lse2 = tl.load(lse_ptr + zs + offs_m, mask=m_ok, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + zs + offs_m, mask=m_ok, other=0.0)
    if IEEE:
        sT = tl.dot(k, qT, input_precision="ieee")
    else:
        sT = tl.dot(k, qT)
    pT = tl.math.exp2(sT * qk_scale - lse2[None, :])
    if MASK:
        pT = tl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
    if IEEE:
        dv = tl.dot(pT, do, dv, input_precision="ieee")
        dpT = tl.dot(v, tl.trans(do), input_precision="ieee")
    else:
        dv = tl.dot(pT.to(do.dtype), do, dv)
        dpT = tl.dot(v, tl.trans(do))
    dsT = pT * (dpT - delta[None, :])
    if IEEE:
        dk = tl.dot(dsT, tl.trans(qT), dk, input_precision="ieee")
    else:
        dk = tl.dot(dsT.to(qT.dtype), tl.trans(qT), dk)
    return dk, dv


@triton.jit
def _dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, S, scale, qk_scale,
                 D: tl.constexpr, IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N
    z = tl.program_id(1).to(tl.int64)
    base = z * S * D
    zs = z * S
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    n_ok = offs_n < S
    k = tl.load(k_ptr + base + offs_n[:, None] * D + offs_d[None, :], mask=n_ok[:, None], other=0.0)
    v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :], mask=n_ok[:, None], other=0.0)
    dk = tl.zeros([BLOCK_N, D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, D], dtype=tl.float32)
    # Query blocks that straddle the diagonal of this key block: masked.
    diag_end = tl.minimum(start_n + BLOCK_N, S)
    for start_m in range(start_n, diag_end, BLOCK_M):
        dk, dv = _dkdv_step(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, zs, start_m, offs_n, S,
                            qk_scale, D, IEEE, True, BLOCK_M)
    # Every later query sees every key of the block: no mask.
    for start_m in range(start_n + BLOCK_N, S, BLOCK_M):
        dk, dv = _dkdv_step(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, zs, start_m, offs_n, S,
                            qk_scale, D, IEEE, False, BLOCK_M)
    out = base + offs_n[:, None] * D + offs_d[None, :]
    tl.store(dk_ptr + out, (dk * scale).to(dk_ptr.dtype.element_ty), mask=n_ok[:, None])
    tl.store(dv_ptr + out, dv.to(dv_ptr.dtype.element_ty), mask=n_ok[:, None])


@triton.jit
def _dq_step(dq, q, do, lse2, delta, k_ptr, v_ptr, base, start_n, offs_m, S, qk_scale, D: tl.constexpr,
             IEEE: tl.constexpr, MASK: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    n_ok = offs_n < S
    kT = tl.load(k_ptr + base + offs_n[None, :] * D + offs_d[:, None], mask=n_ok[None, :], other=0.0)
    vT = tl.load(v_ptr + base + offs_n[None, :] * D + offs_d[:, None], mask=n_ok[None, :], other=0.0)
    if IEEE:
        s = tl.dot(q, kT, input_precision="ieee")
    else:
        s = tl.dot(q, kT)
    p = tl.math.exp2(s * qk_scale - lse2[:, None])
    if MASK:
        p = tl.where(offs_m[:, None] >= offs_n[None, :], p, 0.0)
    if IEEE:
        dp = tl.dot(do, vT, input_precision="ieee")
    else:
        dp = tl.dot(do, vT)
    ds = p * (dp - delta[:, None])
    if IEEE:
        dq = tl.dot(ds, tl.trans(kT), dq, input_precision="ieee")
    else:
        dq = tl.dot(ds.to(kT.dtype), tl.trans(kT), dq)
    return dq


@triton.jit
def _dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, S, scale, qk_scale, D: tl.constexpr,
               IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    z = tl.program_id(1).to(tl.int64)
    base = z * S * D
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    m_ok = offs_m < S
    q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=m_ok[:, None], other=0.0)
    do = tl.load(do_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=m_ok[:, None], other=0.0)
    lse2 = tl.load(lse_ptr + z * S + offs_m, mask=m_ok, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + z * S + offs_m, mask=m_ok, other=0.0)
    dq = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    # Key blocks wholly before this query block: no mask (BLOCK_M is a multiple of BLOCK_N).
    for start_n in range(0, start_m, BLOCK_N):
        dq = _dq_step(dq, q, do, lse2, delta, k_ptr, v_ptr, base, start_n, offs_m, S, qk_scale, D, IEEE, False,
                      BLOCK_N)
    for start_n in range(start_m, tl.minimum(start_m + BLOCK_M, S), BLOCK_N):
        dq = _dq_step(dq, q, do, lse2, delta, k_ptr, v_ptr, base, start_n, offs_m, S, qk_scale, D, IEEE, True,
                      BLOCK_N)
    tl.store(dq_ptr + base + offs_m[:, None] * D + offs_d[None, :], (dq * scale).to(dq_ptr.dtype.element_ty),
             mask=m_ok[:, None])


def attention_bwd(q, k, v, o, do, lse):
    Z, S, D = q.shape
    scale = 1.0 / math.sqrt(D)
    ieee = q.dtype == torch.float32
    delta = torch.empty((Z, S), dtype=torch.float32, device=q.device)
    _delta_kernel[(triton.cdiv(S, 64), Z)](o, do, delta, S, D=D, BLOCK_M=64)
    dq = torch.empty_like(q)
    dk = torch.empty_like(k)
    dv = torch.empty_like(v)
    warps = 4 if D <= 64 else 8
    small, big = 32, 128
    _dkdv_kernel[(triton.cdiv(S, big), Z)](q, k, v, do, lse, delta, dk, dv, S, scale, scale * LOG2E, D=D,
                                           IEEE=ieee, BLOCK_M=small, BLOCK_N=big, num_warps=warps, num_stages=3)
    _dq_kernel[(triton.cdiv(S, big), Z)](q, k, v, do, lse, delta, dq, S, scale, scale * LOG2E, D=D, IEEE=ieee,
                                         BLOCK_M=big, BLOCK_N=small, num_warps=warps, num_stages=3)
    return dq, dk, dv

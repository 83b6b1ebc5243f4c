"""attention_bwd: causal attention backward (dq, dk, dv) from the forward's output and log-sum-exp."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _delta_kernel(o_ptr, do_ptr, delta_ptr, S, D: tl.constexpr, BLOCK_M: tl.constexpr):
    # delta[z, i] = sum_d o[z, i, d] * do[z, i, d]
    z = tl.program_id(1).to(tl.int64)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    ptrs = z * S * D + offs_m[:, None] * D + offs_d[None, :]
    mask = offs_m[:, None] < S
    o = tl.load(o_ptr + ptrs, mask=mask, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + ptrs, mask=mask, other=0.0).to(tl.float32)
    tl.store(delta_ptr + z * S + offs_m, tl.sum(o * do, axis=1), mask=offs_m < S)


@triton.jit
def _dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, S, scale,
                 D: tl.constexpr, IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # One program per block of BLOCK_N keys: walks every query block at or after it, accumulating dk and
    # dv in registers.
    pid_n = tl.program_id(0)
    z = tl.program_id(1).to(tl.int64)
    base = z * S * D
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    n_ok = offs_n < S
    k = tl.load(k_ptr + base + offs_n[:, None] * D + offs_d[None, :], mask=n_ok[:, None], other=0.0)
    v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :], mask=n_ok[:, None], other=0.0)
    dk = tl.zeros([BLOCK_N, D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, D], dtype=tl.float32)
    first_m = (pid_n * BLOCK_N) // BLOCK_M * BLOCK_M
    for start_m in range(first_m, S, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        m_ok = offs_m < S
        q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=m_ok[:, None], other=0.0)
        do = tl.load(do_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=m_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + z * S + offs_m, mask=m_ok, other=0.0)
        delta = tl.load(delta_ptr + z * S + offs_m, mask=m_ok, other=0.0)
        if IEEE:
            s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        else:
            s = tl.dot(q, tl.trans(k)) * scale
        keep = (offs_m[:, None] >= offs_n[None, :]) & m_ok[:, None] & n_ok[None, :]
        p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)
        if IEEE:
            dv = tl.dot(tl.trans(p), do, dv, input_precision="ieee")
            dp = tl.dot(do, tl.trans(v), input_precision="ieee")
        else:
            dv = tl.dot(tl.trans(p.to(do.dtype)), do, dv)
            dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        if IEEE:
            dk = tl.dot(tl.trans(ds), q, dk, input_precision="ieee")
        else:
            dk = tl.dot(tl.trans(ds.to(q.dtype)), q, dk)
    out = base + offs_n[:, None] * D + offs_d[None, :]
    tl.store(dk_ptr + out, (dk * scale).to(dk_ptr.dtype.element_ty), mask=n_ok[:, None])
    tl.store(dv_ptr + out, dv.to(dv_ptr.dtype.element_ty), mask=n_ok[:, None])


@triton.jit
def _dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, S, scale,
               D: tl.constexpr, IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # One program per block of BLOCK_M queries: walks every key block up to its diagonal, recomputing the
    # scores and dO V^T, so dq is summed in registers in one fixed order (no atomics: the same bits on
    # every call).
    pid_m = tl.program_id(0)
    z = tl.program_id(1).to(tl.int64)
    base = z * S * D
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    m_ok = offs_m < S
    q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=m_ok[:, None], other=0.0)
    do = tl.load(do_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=m_ok[:, None], other=0.0)
    lse = tl.load(lse_ptr + z * S + offs_m, mask=m_ok, other=0.0)
    delta = tl.load(delta_ptr + z * S + offs_m, mask=m_ok, other=0.0)
    dq = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    for start_n in range(0, tl.minimum((pid_m + 1) * BLOCK_M, S), BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_ok = offs_n < S
        k = tl.load(k_ptr + base + offs_n[:, None] * D + offs_d[None, :], mask=n_ok[:, None], other=0.0)
        v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :], mask=n_ok[:, None], other=0.0)
        if IEEE:
            s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        else:
            s = tl.dot(q, tl.trans(k)) * scale
        keep = (offs_m[:, None] >= offs_n[None, :]) & m_ok[:, None] & n_ok[None, :]
        p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)
        if IEEE:
            dp = tl.dot(do, tl.trans(v), input_precision="ieee")
        else:
            dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        if IEEE:
            dq = tl.dot(ds, k, dq, input_precision="ieee")
        else:
            dq = tl.dot(ds.to(k.dtype), k, dq)
    tl.store(dq_ptr + base + offs_m[:, None] * D + offs_d[None, :], (dq * scale).to(dq_ptr.dtype.element_ty),
             mask=m_ok[:, None])


def attention_bwd(q, k, v, o, do, lse):
    """(dq, dk, dv), each (Z, S, D) like q, for causal attention with scale 1 / sqrt(D)."""
    Z, S, D = q.shape
    scale = 1.0 / math.sqrt(D)
    ieee = q.dtype == torch.float32
    warps = 4 if D <= 64 else 8
    delta = torch.empty((Z, S), dtype=torch.float32, device=q.device)
    _delta_kernel[(triton.cdiv(S, 64), Z)](o, do, delta, S, D=D, BLOCK_M=64)
    dq = torch.empty_like(q)
    dk = torch.empty_like(k)
    dv = torch.empty_like(v)
    bm, bn = 64, 64
    _dkdv_kernel[(triton.cdiv(S, bn), Z)](q, k, v, do, lse, delta, dk, dv, S, scale, D=D, IEEE=ieee,
                                          BLOCK_M=bm, BLOCK_N=bn, num_warps=warps)
    _dq_kernel[(triton.cdiv(S, bm), Z)](q, k, v, do, lse, delta, dq, S, scale, D=D, IEEE=ieee,
                                        BLOCK_M=bm, BLOCK_N=bn, num_warps=warps)
    return dq, dk, dv

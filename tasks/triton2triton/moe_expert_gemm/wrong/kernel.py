"""moe_expert_gemm with large tiles and a grouped launch order that divides by the full group
width even for the last, partial group of row-blocks (some tiles are computed twice, others never)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _expert_gemm_kernel(x_ptr, w_ptr, y_ptr, C, N, K, IEEE: tl.constexpr, EVEN: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    e = tl.program_id(1).to(tl.int64)
    num_m = tl.cdiv(C, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    group_size = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_size
    pid_n = (pid % per_group) // GROUP_M
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = x_ptr + e * C * K + rm.to(tl.int64)[:, None] * K + rk[None, :]
    b_ptrs = w_ptr + e * N * K + rn.to(tl.int64)[None, :] * K + rk[:, None]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=(rm[:, None] < C) & (rk[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    tl.store(y_ptr + (e * C + rm[:, None]) * N + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < C) & (rn[None, :] < N))


def moe_expert_gemm(x, w):
    E, C, K = x.shape
    N = w.shape[1]
    y = torch.empty((E, C, N), dtype=x.dtype, device=x.device)
    if x.dtype == torch.float32:
        bm, bn, bk, warps, stages = 32, 64, 32, 4, 2
    elif C <= 64:
        bm, bn, bk, warps, stages = 64, 128, 128, 4, 4
    else:
        bm, bn, bk, warps, stages = 128, 128, 64, 8, 3
    even = C % bm == 0 and N % bn == 0 and K % bk == 0
    grid = (triton.cdiv(C, bm) * triton.cdiv(N, bn), E)
    _expert_gemm_kernel[grid](x, w, y, C, N, K, IEEE=x.dtype == torch.float32, EVEN=even, BLOCK_M=bm,
                              BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps, num_stages=stages)
    return y

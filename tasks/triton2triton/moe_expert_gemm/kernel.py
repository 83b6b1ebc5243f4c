"""moe_expert_gemm: the grouped GEMM of a mixture-of-experts layer with capacity-padded expert batches."""

import torch
import triton
import triton.language as tl


@triton.jit
def _expert_gemm_kernel(x_ptr, w_ptr, y_ptr, C, N, K, IEEE: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    e = tl.program_id(2).to(tl.int64)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_base = x_ptr + e * C * K
    w_base = w_ptr + e * N * K
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_base + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < C) & (kk[None, :] < K), other=0.0)
        b = tl.load(w_base + rn[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    tl.store(y_ptr + (e * C + rm[:, None]) * N + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < C) & (rn[None, :] < N))


def moe_expert_gemm(x, w):
    """y[e] = x[e] @ w[e].T for x (E, C, K) and expert weights w (E, N, K); returns (E, C, N)."""
    E, C, K = x.shape
    N = w.shape[1]
    y = torch.empty((E, C, N), dtype=x.dtype, device=x.device)
    bm, bn, bk = 64, 64, 32
    grid = (triton.cdiv(C, bm), triton.cdiv(N, bn), E)
    _expert_gemm_kernel[grid](x, w, y, C, N, K, IEEE=x.dtype == torch.float32, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    return y

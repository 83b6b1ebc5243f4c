"""fp8_block_gemm: a linear layer on float8_e4m3fn operands with block scales (DeepSeek-V3 style)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _fp8_gemm_kernel(x_ptr, xs_ptr, w_ptr, ws_ptr, y_ptr, M, N, K, KB, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # BLOCK_K is the scale block (128): one x scale per row and one w scale per 128 columns of N.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    m_ok = rm < M
    n_ok = rn < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for kb in range(0, KB):
        kk = kb * BLOCK_K + rk
        a = tl.load(x_ptr + rm.to(tl.int64)[:, None] * K + kk[None, :], mask=m_ok[:, None] & (kk[None, :] < K),
                    other=0)
        b = tl.load(w_ptr + rn.to(tl.int64)[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & n_ok[None, :],
                    other=0)
        # The bytes are float8_e4m3fn; every such value is exact in float16.
        a = a.to(tl.float8e4nv, bitcast=True).to(tl.float16)
        b = b.to(tl.float8e4nv, bitcast=True).to(tl.float16)
        part = tl.dot(a, b)
        xs = tl.load(xs_ptr + rm * KB + kb, mask=m_ok, other=0.0)
        ws = tl.load(ws_ptr + (rn // 128) * KB + kb, mask=n_ok, other=0.0)
        acc += part * xs[:, None] * ws[None, :]
    tl.store(y_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=m_ok[:, None] & n_ok[None, :])


def fp8_block_gemm(xq, x_scale, wq, w_scale):
    """y (M, N) bfloat16 = the block-scaled product of xq (M, K) and wq (N, K), float8_e4m3fn bytes."""
    M, K = xq.shape
    N = wq.shape[0]
    KB = x_scale.shape[1]
    y = torch.empty((M, N), dtype=torch.bfloat16, device=xq.device)
    bm, bn = 64, 128
    _fp8_gemm_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](xq, x_scale, wq, w_scale, y, M, N, K, KB,
                                                              BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=128, num_warps=4,
                                                              num_stages=3)
    return y

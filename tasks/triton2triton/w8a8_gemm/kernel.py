"""w8a8_gemm: an int8 x int8 linear layer with per-token and per-channel scales (SmoothQuant-style W8A8)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _w8a8_kernel(x_ptr, w_ptr, xs_ptr, ws_ptr, bias_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptr + rm.to(tl.int64)[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K),
                    other=0)
        b = tl.load(w_ptr + rn.to(tl.int64)[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N),
                    other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    xs = tl.load(xs_ptr + rm, mask=rm < M, other=0.0)
    ws = tl.load(ws_ptr + rn, mask=rn < N, other=0.0)
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    y = acc.to(tl.float32) * xs[:, None] * ws[None, :] + bias[None, :]
    tl.store(y_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :], y.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def w8a8_gemm(xq, wq, x_scale, w_scale, bias):
    """(xq @ wq.T) * x_scale[:, None] * w_scale[None, :] + bias for int8 xq (M, K), wq (N, K); bias's dtype out."""
    M, K = xq.shape
    N = wq.shape[0]
    y = torch.empty((M, N), dtype=bias.dtype, device=xq.device)
    bm, bn, bk = 64, 64, 32
    _w8a8_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](xq, wq, x_scale, w_scale, bias, y, M, N, K, BLOCK_M=bm,
                                                          BLOCK_N=bn, BLOCK_K=bk)
    return y

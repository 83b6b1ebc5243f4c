"""moe_decode_gemv: the expert projections of a mixture-of-experts layer for a decode batch."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gemv_kernel(x_ptr, w_ptr, ids_ptr, y_ptr, N, K, TOPK, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program per (block of BLOCK_N output columns, routed (token, slot) pair).
    pid_n = tl.program_id(0)
    pair = tl.program_id(1)
    token = pair // TOPK
    e = tl.load(ids_ptr + pair).to(tl.int64)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    n_ok = rn < N
    w_rows = w_ptr + e * N * K + rn.to(tl.int64)[:, None] * K
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        k_ok = kk < K
        xv = tl.load(x_ptr + token * K + kk, mask=k_ok, other=0.0).to(tl.float32)
        wv = tl.load(w_rows + kk[None, :], mask=n_ok[:, None] & k_ok[None, :], other=0.0).to(tl.float32)
        acc += wv * xv[None, :]
    y = tl.sum(acc, axis=1)
    tl.store(y_ptr + pair.to(tl.int64) * N + rn, y.to(y_ptr.dtype.element_ty), mask=n_ok)


def moe_decode_gemv(x, w, topk_ids):
    """y (M, TOPK, N): y[m, j] = w[topk_ids[m, j]] @ x[m]."""
    M, K = x.shape
    E, N, _ = w.shape
    TOPK = topk_ids.shape[1]
    y = torch.empty((M, TOPK, N), dtype=x.dtype, device=x.device)
    bn, bk = 64, 128
    _gemv_kernel[(triton.cdiv(N, bn), M * TOPK)](x, w, topk_ids, y, N, K, TOPK, BLOCK_N=bn, BLOCK_K=bk,
                                                  num_warps=4)
    return y

"""gemv: a linear layer at decode time, y = x @ w.T for a few rows of x."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gemv_kernel(x_ptr, w_ptr, y_ptr, M, N, K, IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr):
    # One program per BLOCK_N outputs, for all M rows of x at once (padded to a tl.dot tile).
    rm = tl.arange(0, BLOCK_M)
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        kmask = rk < K
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & kmask[None, :], other=0.0)
        w = tl.load(w_ptr + rn.to(tl.int64)[None, :] * K + rk[:, None], mask=kmask[:, None] & (rn[None, :] < N),
                    other=0.0)
        if IEEE:
            acc = tl.dot(x, w, acc, input_precision="ieee")
        else:
            acc = tl.dot(x, w, acc)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def gemv(x, w):
    """x (M, K) @ w.T for a row-major (N, K) weight; returns (M, N) of x's dtype."""
    M, K = x.shape
    N = w.shape[0]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    ieee = x.dtype == torch.float32
    block_m, block_n, block_k = max(16, triton.next_power_of_2(M)), 64, 32
    _gemv_kernel[(triton.cdiv(N, block_n),)](x, w, y, M, N, K, IEEE=ieee, BLOCK_M=block_m, BLOCK_N=block_n,
                                             BLOCK_K=block_k)
    return y

"""gemv: a linear layer at decode time, y = x @ w.T for a few rows of x."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gemv_kernel(x_ptr, w_ptr, y_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    m = tl.program_id(0).to(tl.int64)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + m * K + rk, mask=rk < K, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + rn.to(tl.int64)[:, None] * K + rk[None, :], mask=(rn[:, None] < N) & (rk[None, :] < K),
                    other=0.0).to(tl.float32)
        acc += w * x[None, :]
    y = tl.sum(acc, axis=1)
    tl.store(y_ptr + m * N + rn, y.to(y_ptr.dtype.element_ty), mask=rn < N)


def gemv(x, w):
    """x (M, K) @ w.T for a row-major (N, K) weight; returns (M, N) of x's dtype."""
    M, K = x.shape
    N = w.shape[0]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    block_n, block_k = 16, 256
    _gemv_kernel[(M, triton.cdiv(N, block_n))](x, w, y, N, K, BLOCK_N=block_n, BLOCK_K=block_k)
    return y

"""A linear layer with float32 output: x @ w.T for a few rows of x (decode)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(x_ptr, w_ptr, y_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    m = tl.program_id(0).to(tl.int64)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + m * K + rk, mask=rk < K, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + rn.to(tl.int64)[:, None] * K + rk[None, :], mask=(rn[:, None] < N) & (rk[None, :] < K),
                    other=0.0).to(tl.float32)
        acc += w * x[None, :]
    tl.store(y_ptr + m * N + rn, tl.sum(acc, axis=1), mask=rn < N)


def linear_f32(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """x (M, K) @ w.T for a row-major (N, K) weight, accumulated and returned in float32 (M, N)."""
    M, K = x.shape
    N = w.shape[0]
    y = torch.empty((M, N), dtype=torch.float32, device=x.device)
    block_n, block_k = 16, 256
    _linear_kernel[(M, triton.cdiv(N, block_n))](x, w, y, N, K, BLOCK_N=block_n, BLOCK_K=block_k)
    return y

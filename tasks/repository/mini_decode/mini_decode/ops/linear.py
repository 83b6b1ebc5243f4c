"""A linear layer for a decode batch: y = a @ w (+ residual), float32 accumulation."""

import torch
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(a_ptr, w_ptr, r_ptr, y_ptr, M, N, K, HAS_RESIDUAL: tl.constexpr, IEEE: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rk.to(tl.int64)[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        if IEEE:
            acc = tl.dot(a, w, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, w, acc)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if HAS_RESIDUAL:
        acc += tl.load(r_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty), mask=mask)


def linear(a: torch.Tensor, w: torch.Tensor, residual: torch.Tensor | None = None) -> torch.Tensor:
    """a (M, K) @ w (K, N), both row-major, plus residual (M, N) when given, added in float32
    before the one rounding to a's dtype."""
    M, K = a.shape
    N = w.shape[1]
    y = torch.empty((M, N), dtype=a.dtype, device=a.device)
    ieee = a.dtype == torch.float32
    block_m = max(16, min(64, triton.next_power_of_2(M)))
    block_n, block_k = 64, (32 if ieee else 128)
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))
    _linear_kernel[grid](a, w, residual if residual is not None else y, y, M, N, K,
                         HAS_RESIDUAL=residual is not None, IEEE=ieee,
                         BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, num_warps=4, num_stages=3)
    return y

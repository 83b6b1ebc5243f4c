"""l2_norm_bwd: input gradient of row-wise L2 normalisation, x / max(||x||, 1e-12)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_stats_kernel(dy_ptr, x_ptr, inv_n_ptr, c_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    ss = tl.zeros([BLOCK], dtype=tl.float32)
    dot = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        ss += x * x
        dot += x * dy
    n = tl.sqrt(tl.sum(ss, axis=0))
    d = tl.sum(dot, axis=0)
    inv_n = 1.0 / tl.maximum(n, eps)
    # dx = dy * inv_n - x * c, with c = dot / n^3 (0 when the row is below eps).
    c = tl.where(n > eps, d * inv_n * inv_n * inv_n, 0.0)
    tl.store(inv_n_ptr + row, inv_n)
    tl.store(c_ptr + row, c)


@triton.jit
def _apply_kernel(dy_ptr, x_ptr, inv_n_ptr, c_ptr, dx_ptr, total, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    rows = offs // N
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    inv_n = tl.load(inv_n_ptr + rows, mask=mask, other=0.0)
    c = tl.load(c_ptr + rows, mask=mask, other=0.0)
    tl.store(dx_ptr + offs, (dy * inv_n - x * c).to(dx_ptr.dtype.element_ty), mask=mask)


def l2_norm_bwd(dy: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """dx (like x) for upstream gradient dy and input x, both contiguous (M, N)."""
    M, N = x.shape
    dx = torch.empty_like(x)
    inv_n = torch.empty(M, dtype=torch.float32, device=x.device)
    c = torch.empty(M, dtype=torch.float32, device=x.device)
    _row_stats_kernel[(M,)](dy, x, inv_n, c, N, 1e-12, BLOCK=256, num_warps=4)
    block = 1024
    _apply_kernel[(triton.cdiv(M * N, block),)](dy, x, inv_n, c, dx, M * N, N, BLOCK=block, num_warps=4)
    return dx

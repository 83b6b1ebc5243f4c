"""l2_norm_bwd over BLOCK-wide chunks of each row whose sums run over the whole chunks only (N // BLOCK
of them, unmasked): the partial last chunk of a row whose length is not a multiple of BLOCK is left
out of the norm and the dot product, while dx is still written for every element.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _l2_norm_bwd_kernel(dy_ptr, x_ptr, dx_ptr, M, N, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    base = rows.to(tl.int64)[:, None] * N
    cols = tl.arange(0, BLOCK)
    ss = tl.zeros([ROWS, BLOCK], dtype=tl.float32)
    dot = tl.zeros([ROWS, BLOCK], dtype=tl.float32)
    # Whole chunks: no column mask needed.
    for k in range(0, N // BLOCK):
        offs = base + (k * BLOCK + cols)[None, :]
        x = tl.load(x_ptr + offs, mask=row_ok[:, None], other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offs, mask=row_ok[:, None], other=0.0).to(tl.float32)
        ss += x * x
        dot += x * dy
    n = tl.sqrt(tl.sum(ss, axis=1))
    d = tl.sum(dot, axis=1)
    inv_n = 1.0 / tl.maximum(n, eps)
    c = tl.where(n > eps, d * inv_n * inv_n * inv_n, 0.0)
    for start in range(0, N, BLOCK):
        mask = row_ok[:, None] & ((start + cols) < N)[None, :]
        offs = base + (start + cols)[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        dx = dy * inv_n[:, None] - x * c[:, None]
        tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def l2_norm_bwd(dy: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    dx = torch.empty_like(x)
    block = 128
    rows = 8
    _l2_norm_bwd_kernel[(triton.cdiv(M, rows),)](dy, x, dx, M, N, 1e-12, ROWS=rows, BLOCK=block, num_warps=4)
    return dx

"""cross_entropy_bwd: gradient of per-token cross-entropy with respect to the logits."""

import torch
import triton
import triton.language as tl


@triton.jit
def _lse_kernel(x_ptr, lse_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * V
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * alpha + tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    tl.store(lse_ptr + row, row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0)))


@triton.jit
def _grad_kernel(x_ptr, labels_ptr, dloss_ptr, lse_ptr, dx_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < V
    x = tl.load(x_ptr + row * V + cols, mask=mask, other=0.0).to(tl.float32)
    lse = tl.load(lse_ptr + row)
    g = tl.load(dloss_ptr + row)
    label = tl.load(labels_ptr + row)
    p = tl.exp(x - lse)
    dx = (p - tl.where(cols == label, 1.0, 0.0)) * g
    tl.store(dx_ptr + row * V + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def cross_entropy_bwd(logits, labels, dloss):
    """d loss / d logits for (M, V) logits, (M,) int64 labels and (M,) float32 upstream gradients."""
    M, V = logits.shape
    lse = torch.empty(M, dtype=torch.float32, device=logits.device)
    dx = torch.empty_like(logits)
    block = 2048
    _lse_kernel[(M,)](logits, lse, V, BLOCK=block, num_warps=8)
    _grad_kernel[(M, triton.cdiv(V, block))](logits, labels, dloss, lse, dx, V, BLOCK=block, num_warps=8)
    return dx

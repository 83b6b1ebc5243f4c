"""cross_entropy_bwd in one kernel that scales only the softmax term by the upstream
gradient, not the one-hot term."""

import torch
import triton
import triton.language as tl


@triton.jit
def _one_load_kernel(x_ptr, labels_ptr, dloss_ptr, dx_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < V
    x = tl.load(x_ptr + row * V + cols, mask=mask, other=float("-inf")).to(tl.float32)
    g = tl.load(dloss_ptr + row)
    label = tl.load(labels_ptr + row)
    e = tl.exp(x - tl.max(x, axis=0))
    p = e / tl.sum(e, axis=0)
    dx = p * g - tl.where(cols == label, 1.0, 0.0)
    tl.store(dx_ptr + row * V + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _two_pass_kernel(x_ptr, labels_ptr, dloss_ptr, dx_ptr, V, BLOCK: tl.constexpr):
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
    lse = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0))
    g = tl.load(dloss_ptr + row)
    label = tl.load(labels_ptr + row)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < V
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        dx = tl.exp(x - lse) * g - tl.where(cols == label, 1.0, 0.0)
        tl.store(dx_ptr + row * V + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def cross_entropy_bwd(logits, labels, dloss):
    M, V = logits.shape
    dx = torch.empty_like(logits)
    width = triton.next_power_of_2(V)
    if width <= 32768:
        warps = 4 if width <= 2048 else (8 if width <= 8192 else 16)
        _one_load_kernel[(M,)](logits, labels, dloss, dx, V, BLOCK=width, num_warps=warps)
    else:
        _two_pass_kernel[(M,)](logits, labels, dloss, dx, V, BLOCK=4096, num_warps=16)
    return dx

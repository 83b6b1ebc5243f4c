"""AdamW (decoupled weight decay) for one float32 parameter tensor, out of place."""

import math

import torch
import triton
import triton.language as tl

_BLOCK = 1024


@triton.jit
def _decay_kernel(p_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(p_ptr + offs, mask=mask, other=0.0) * factor, mask=mask)


@triton.jit
def _moments_kernel(g_ptr, m_ptr, v_ptr, m_out_ptr, v_out_ptr, n, beta1, beta2, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    tl.store(m_out_ptr + offs, beta1 * m + (1.0 - beta1) * g, mask=mask)
    tl.store(v_out_ptr + offs, beta2 * v + (1.0 - beta2) * (g * g), mask=mask)


@triton.jit
def _update_kernel(p_ptr, m_ptr, v_ptr, n, step_size, bc2_sqrt, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    denom = tl.sqrt(v) / bc2_sqrt + eps
    tl.store(p_ptr + offs, p - step_size * (m / denom), mask=mask)


def adamw(
    p: torch.Tensor,
    g: torch.Tensor,
    m: torch.Tensor,
    v: torch.Tensor,
    *,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
):
    """One AdamW step (step counts from 1) for contiguous float32 tensors of one shape.

    p' = p * (1 - lr * weight_decay); m' = beta1 * m + (1 - beta1) * g; v' = beta2 * v + (1 - beta2) * g**2;
    p' -= lr / (1 - beta1**step) * m' / (sqrt(v') / sqrt(1 - beta2**step) + eps). Returns new (p', m', v').
    """
    n = p.numel()
    grid = (triton.cdiv(n, _BLOCK),)
    p_out = torch.empty_like(p)
    m_out = torch.empty_like(m)
    v_out = torch.empty_like(v)
    _decay_kernel[grid](p, p_out, n, 1.0 - lr * weight_decay, BLOCK=_BLOCK)
    _moments_kernel[grid](g, m, v, m_out, v_out, n, beta1, beta2, BLOCK=_BLOCK)
    step_size = lr / (1.0 - beta1**step)
    bc2_sqrt = math.sqrt(1.0 - beta2**step)
    _update_kernel[grid](p_out, m_out, v_out, n, step_size, bc2_sqrt, eps, BLOCK=_BLOCK)
    return p_out, m_out, v_out

"""fused_adamw: one AdamW step over a flat float32 parameter buffer and its optimiser state."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _moments_kernel(g_ptr, m_ptr, v_ptr, m_out, v_out, N, beta1, beta2, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    tl.store(m_out + offs, beta1 * m + (1.0 - beta1) * g, mask=mask)
    tl.store(v_out + offs, beta2 * v + (1.0 - beta2) * g * g, mask=mask)


@triton.jit
def _direction_kernel(m_ptr, v_ptr, d_ptr, N, inv_sqrt_bc2, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    m = tl.load(m_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    tl.store(d_ptr + offs, m / (tl.sqrt(v) * inv_sqrt_bc2 + eps), mask=mask)


@triton.jit
def _param_kernel(p_ptr, d_ptr, p_out, N, decay, step_size, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    d = tl.load(d_ptr + offs, mask=mask, other=0.0)
    tl.store(p_out + offs, p * decay - step_size * d, mask=mask)


def fused_adamw(param, grad, exp_avg, exp_avg_sq, *, lr, beta1, beta2, eps, weight_decay, step):
    """(param', exp_avg', exp_avg_sq'): new float32 tensors after one AdamW step; the inputs are unchanged."""
    N = param.numel()
    p_out = torch.empty_like(param)
    m_out = torch.empty_like(exp_avg)
    v_out = torch.empty_like(exp_avg_sq)
    direction = torch.empty_like(param)
    bc1 = 1.0 - beta1**step
    bc2 = 1.0 - beta2**step
    block = 1024
    grid = (triton.cdiv(N, block),)
    _moments_kernel[grid](grad, exp_avg, exp_avg_sq, m_out, v_out, N, beta1, beta2, BLOCK=block)
    _direction_kernel[grid](m_out, v_out, direction, N, 1.0 / math.sqrt(bc2), eps, BLOCK=block)
    _param_kernel[grid](param, direction, p_out, N, 1.0 - lr * weight_decay, lr / bc1, BLOCK=block)
    return p_out, m_out, v_out

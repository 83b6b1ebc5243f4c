"""AdamW fused into one kernel per tensor, with the clipping coefficient applied on load.

The baseline clips every gradient in place (a read and a write), then runs three kernels per
tensor: the decay, the moments and the update, writing and re-reading p', m' and v'. Here one
kernel reads p, g, m and v once and writes p', m' and v' once.
"""

import math

import torch
import triton
import triton.language as tl

_BLOCK = 2048


@triton.jit
def _adamw_kernel(
    p_ptr,
    g_ptr,
    m_ptr,
    v_ptr,
    p_out,
    m_out,
    v_out,
    coef_ptr,
    n,
    decay,
    beta1,
    beta2,
    step_size,
    bc2_sqrt,
    eps,
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    coef = tl.load(coef_ptr)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0) * coef
    p = tl.load(p_ptr + offs, mask=mask, other=0.0) * decay
    m = beta1 * tl.load(m_ptr + offs, mask=mask, other=0.0) + (1.0 - beta1) * g
    v = beta2 * tl.load(v_ptr + offs, mask=mask, other=0.0) + (1.0 - beta2) * (g * g)
    tl.store(m_out + offs, m, mask=mask)
    tl.store(v_out + offs, v, mask=mask)
    tl.store(p_out + offs, p - step_size * (m / (tl.sqrt(v) / bc2_sqrt + eps)), mask=mask)


def adamw(p, g, m, v, coef, *, step, lr, beta1, beta2, eps, weight_decay):
    """One AdamW step on g * coef (coef a one-element float32 tensor); returns new (p', m', v')."""
    n = p.numel()
    p_out, m_out, v_out = torch.empty_like(p), torch.empty_like(m), torch.empty_like(v)
    _adamw_kernel[(triton.cdiv(n, _BLOCK),)](
        p,
        g,
        m,
        v,
        p_out,
        m_out,
        v_out,
        coef,
        n,
        1.0 - lr * weight_decay,
        beta1,
        beta2,
        lr / (1.0 - beta1**step),
        math.sqrt(1.0 - beta2**step),
        eps,
        BLOCK=_BLOCK,
        num_warps=8,
    )
    return p_out, m_out, v_out

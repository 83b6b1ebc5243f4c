"""fused_adamw in one pass that divides sqrt(v') by the second bias correction itself rather than by
its square root."""

import torch
import triton
import triton.language as tl


@triton.jit
def _adamw_kernel(
    p_ptr,
    g_ptr,
    m_ptr,
    v_ptr,
    p_out,
    m_out,
    v_out,
    N,
    beta1,
    beta2,
    inv_bc2,
    eps,
    decay,
    step_size,
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * g * g
    tl.store(m_out + offs, m, mask=mask)
    tl.store(v_out + offs, v, mask=mask)
    tl.store(p_out + offs, p * decay - step_size * (m / (tl.sqrt(v) * inv_bc2 + eps)), mask=mask)


def fused_adamw(param, grad, exp_avg, exp_avg_sq, *, lr, beta1, beta2, eps, weight_decay, step):
    N = param.numel()
    p_out = torch.empty_like(param)
    m_out = torch.empty_like(exp_avg)
    v_out = torch.empty_like(exp_avg_sq)
    bc1 = 1.0 - beta1**step
    bc2 = 1.0 - beta2**step
    block = 2048
    _adamw_kernel[(triton.cdiv(N, block),)](
        param,
        grad,
        exp_avg,
        exp_avg_sq,
        p_out,
        m_out,
        v_out,
        N,
        beta1,
        beta2,
        1.0 / bc2,
        eps,
        1.0 - lr * weight_decay,
        lr / bc1,
        BLOCK=block,
        num_warps=8,
    )
    return p_out, m_out, v_out

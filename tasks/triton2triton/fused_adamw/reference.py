"""Reference for fused_adamw: one AdamW step in float32 (float64 when given float64), as written in the
task."""

import math

import torch


def fused_adamw(param, grad, exp_avg, exp_avg_sq, *, lr, beta1, beta2, eps, weight_decay, step):
    acc = torch.promote_types(param.dtype, torch.float32)
    p, g, m, v = param.to(acc), grad.to(acc), exp_avg.to(acc), exp_avg_sq.to(acc)
    bc1 = 1.0 - beta1**step
    bc2 = 1.0 - beta2**step
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * g * g
    p = p * (1.0 - lr * weight_decay) - (lr / bc1) * m / (v.sqrt() / math.sqrt(bc2) + eps)
    out = torch.promote_types(acc, torch.float32)
    return p.to(out), m.to(out), v.to(out)

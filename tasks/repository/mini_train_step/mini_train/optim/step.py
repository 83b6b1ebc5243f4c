"""The optimizer step: global grad-norm clipping, then AdamW on every parameter tensor."""

import torch

from mini_train.optim.adamw import adamw
from mini_train.optim.clip import clip_coefficient, scale_
from mini_train.optim.grad_norm import global_grad_norm


def optimizer_step(
    params: list[torch.Tensor],
    grads: list[torch.Tensor],
    exp_avgs: list[torch.Tensor],
    exp_avg_sqs: list[torch.Tensor],
    *,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    max_norm: float,
):
    """Clips grads (float32, owned by the caller's step; scaled in place) to a global L2 norm of at
    most max_norm (coefficient min(max_norm / (norm + 1e-6), 1)), then applies AdamW to each
    parameter. Returns (new params, (new first moments, new second moments)); inputs are unchanged
    apart from grads."""
    coef = clip_coefficient(global_grad_norm(grads), max_norm)
    scale_(grads, coef)
    new_params, new_m, new_v = [], [], []
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        p_out, m_out, v_out = adamw(
            p, g, m, v, step=step, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay
        )
        new_params.append(p_out)
        new_m.append(m_out)
        new_v.append(v_out)
    return new_params, (new_m, new_v)

"""The optimizer step: one pass over the gradients for the clipping coefficient, then one fused
AdamW kernel per parameter tensor that applies the coefficient as it loads each gradient."""

from mini_train.optim.adamw import adamw
from mini_train.optim.grad_norm import clip_coefficient


def optimizer_step(params, grads, exp_avgs, exp_avg_sqs, *, step, lr, beta1, beta2, eps, weight_decay, max_norm):
    coef = clip_coefficient(grads, max_norm)
    new_params, new_m, new_v = [], [], []
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        p_out, m_out, v_out = adamw(
            p, g, m, v, coef, step=step, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay
        )
        new_params.append(p_out)
        new_m.append(m_out)
        new_v.append(v_out)
    return new_params, (new_m, new_v)

"""Reference for mini_train's train_step: float32 math (float64 for float64 inputs), with the cast
weights and the activations and their gradients (a, h, y, dy, dh, da) rounded to the dtype of x at the
same points as mini_train/train_step.py."""

import math

import torch


def train_step(
    x,
    target,
    w1,
    b1,
    w2,
    b2,
    m_w1,
    m_b1,
    m_w2,
    m_b2,
    v_w1,
    v_b1,
    v_w2,
    v_b2,
    *,
    step,
    lr,
    beta1,
    beta2,
    eps,
    weight_decay,
    max_norm,
):
    dtype = x.dtype
    acc = torch.promote_types(torch.promote_types(dtype, w1.dtype), torch.float32)

    def rounded(t):
        return t.to(dtype).to(acc)

    xf, tf = x.to(acc), target.to(acc)
    w1c, w2c = rounded(w1.to(acc)), rounded(w2.to(acc))
    a = rounded(xf @ w1c + b1.to(acc))
    h = rounded(a * torch.sigmoid(a))
    y = rounded(h @ w2c + b2.to(acc))
    dy = rounded((y - tf) * (1.0 / x.shape[0]))
    dw2 = h.t() @ dy
    db2 = dy.sum(dim=0)
    dh = rounded(dy @ w2c.t())
    s = torch.sigmoid(a)
    da = rounded(dh * (s * (1.0 + a * (1.0 - s))))
    dw1 = xf.t() @ da
    db1 = da.sum(dim=0)

    grads = [dw1, db1, dw2, db2]
    norm = torch.sqrt(sum((g * g).sum() for g in grads))
    coef = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
    step_size = lr / (1.0 - beta1**step)
    bc2_sqrt = math.sqrt(1.0 - beta2**step)
    params, firsts, seconds = [], [], []
    for p, g, m, v in zip([w1, b1, w2, b2], grads, [m_w1, m_b1, m_w2, m_b2], [v_w1, v_b1, v_w2, v_b2]):
        g = g * coef
        p = p.to(acc) * (1.0 - lr * weight_decay)
        m = beta1 * m.to(acc) + (1.0 - beta1) * g
        v = beta2 * v.to(acc) + (1.0 - beta2) * g * g
        p = p - step_size * (m / (torch.sqrt(v) / bc2_sqrt + eps))
        params.append(p)
        firsts.append(m)
        seconds.append(v)
    return (*params, *firsts, *seconds)

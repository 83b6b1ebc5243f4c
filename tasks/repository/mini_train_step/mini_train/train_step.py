"""One training step of a two-layer MLP regressor, composed from the ops in mini_train.ops and the
optimizer in mini_train.optim.

The parameters and AdamW moments are float32 (master copies); the forward and backward run in the
dtype of x: the weights are cast to it, the activations a, h = silu(a), y and
the gradients dy, dh = dy @ w2.T and da are rounded to it between ops, and the
weight and bias gradients come out of the GEMMs and column sums in float32. The loss is
0.5 * sum((y - target)**2) / T. The reference rounds at the same points.
"""

import torch

from mini_train.ops.elementwise import cast, mse_grad, silu, silu_backward
from mini_train.ops.matmul import matmul
from mini_train.ops.reduce import column_sum
from mini_train.optim.step import optimizer_step


def train_step(
    x: torch.Tensor,
    target: torch.Tensor,
    w1: torch.Tensor,
    b1: torch.Tensor,
    w2: torch.Tensor,
    b2: torch.Tensor,
    m_w1: torch.Tensor,
    m_b1: torch.Tensor,
    m_w2: torch.Tensor,
    m_b2: torch.Tensor,
    v_w1: torch.Tensor,
    v_b1: torch.Tensor,
    v_w2: torch.Tensor,
    v_b2: torch.Tensor,
    *,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    max_norm: float,
):
    """Forward, backward, global grad-norm clipping and AdamW for y = silu(x @ w1 + b1) @ w2 + b2.

    x (T, IN) and target (T, OUT) are in the compute dtype; w1 (IN, HID), b1 (HID), w2 (HID, OUT),
    b2 (OUT) and their moments are float32. Returns the updated (w1, b1, w2, b2), then their first
    moments, then their second moments, as new float32 tensors.
    """
    dtype = x.dtype
    tokens = x.shape[0]
    w1_c = cast(w1, dtype)
    w2_c = cast(w2, dtype)

    # Forward.
    a = matmul(x, w1_c, dtype, bias=b1)
    h = silu(a)
    y = matmul(h, w2_c, dtype, bias=b2)

    # Backward.
    dy = mse_grad(y, target, 1.0 / tokens)
    dw2 = matmul(h.t(), dy, torch.float32)
    db2 = column_sum(dy)
    da = silu_backward(matmul(dy, w2_c.t(), dtype), a)
    dw1 = matmul(x.t(), da, torch.float32)
    db1 = column_sum(da)

    params, moments = optimizer_step(
        [w1, b1, w2, b2],
        [dw1, db1, dw2, db2],
        [m_w1, m_b1, m_w2, m_b2],
        [v_w1, v_b1, v_w2, v_b2],
        step=step,
        lr=lr,
        beta1=beta1,
        beta2=beta2,
        eps=eps,
        weight_decay=weight_decay,
        max_norm=max_norm,
    )
    first, second = moments
    return (*params, *first, *second)

"""The MLP block of a Llama-style layer, composed from the ops in mini_mlp.ops.

Each op returns a tensor of the input dtype, so h, gate, up and the activation are rounded to
that dtype between ops; the reference rounds at the same points.
"""

import torch

from mini_mlp.ops.activation import silu_and_mul
from mini_mlp.ops.matmul import matmul
from mini_mlp.ops.rmsnorm import rms_norm


def mlp_block(
    x: torch.Tensor,
    norm_weight: torch.Tensor,
    w_gate: torch.Tensor,
    w_up: torch.Tensor,
    w_down: torch.Tensor,
    eps: float,
) -> torch.Tensor:
    """down(silu(h @ w_gate) * (h @ w_up)) with h = rms_norm(x) * norm_weight; x is (T, H)."""
    h = rms_norm(x, norm_weight, eps)
    gate = matmul(h, w_gate)
    up = matmul(h, w_up)
    return matmul(silu_and_mul(gate, up), w_down)

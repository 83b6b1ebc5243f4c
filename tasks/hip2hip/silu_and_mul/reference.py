"""SiLU-and-mul of a fused gate/up projection, computed in (at least) float32, rounded once."""

import torch


def silu_and_mul(gate_up: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(gate_up.dtype, torch.float32)
    n = gate_up.shape[-1] // 2
    g = gate_up[:, :n].to(compute)
    u = gate_up[:, n:].to(compute)
    return (g * torch.sigmoid(g) * u).to(gate_up.dtype)

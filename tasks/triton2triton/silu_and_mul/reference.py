"""Reference for silu_and_mul: silu(gate) * up in float32 (float64 for float64 inputs)."""

import torch


def silu_and_mul(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    acc = torch.promote_types(gate.dtype, torch.float32)
    g = gate.to(acc)
    return (g * torch.sigmoid(g) * up.to(acc)).to(gate.dtype)

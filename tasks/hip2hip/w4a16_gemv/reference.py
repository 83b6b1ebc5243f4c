"""Decode-batch product with 4-bit weights: unpack the nibbles (low nibble first), subtract 8, apply
each 128-column group's scale, multiply in float32 (float64 when given float64), round once."""

import torch

GROUP = 128


def w4a16_gemv(x: torch.Tensor, w: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    N = w.shape[0]
    low = (w & 0xF).to(compute) - 8.0
    high = (w >> 4).to(compute) - 8.0
    q = torch.stack([low, high], dim=-1).reshape(N, -1)  # column 2j: low nibble of byte j
    wf = q * scales.to(compute).repeat_interleave(GROUP, dim=1)
    return (x.to(compute) @ wf.t()).to(x.dtype)

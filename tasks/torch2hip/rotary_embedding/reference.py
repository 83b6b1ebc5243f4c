"""The operation to implement: neox-style rotary position embedding of q and k, the angles
computed from the positions and the inverse frequencies."""

import torch


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(x.dtype, torch.float32)
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].to(compute), x[..., half:].to(compute)
    c, s = cos[:, None, :].to(compute), sin[:, None, :].to(compute)
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def rotary_embedding(
    q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    # The angle is a float32 product, as models compute it; its cosine and sine in float32 (or wider).
    angle = positions.to(torch.float32)[:, None] * inv_freq.to(torch.float32)[None, :]
    compute = torch.promote_types(q.dtype, torch.float32)
    cos, sin = torch.cos(angle.to(compute)), torch.sin(angle.to(compute))
    return _rotate(q, cos, sin), _rotate(k, cos, sin)

"""Reference for rotary_embedding (neox style), in float32 (float64 for float64 inputs), rounded once."""

import torch


def _rotate(x, cos, sin):
    acc = torch.promote_types(x.dtype, torch.float32)
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].to(acc), x[..., half:].to(acc)
    c, s = cos[:, None, :].to(acc), sin[:, None, :].to(acc)
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def rotary_embedding(q, k, cos_cache, sin_cache, positions):
    cos = cos_cache[positions.long()]
    sin = sin_cache[positions.long()]
    return _rotate(q, cos, sin), _rotate(k, cos, sin)

"""Reference for qk_norm_rope (Qwen3-style per-head RMSNorm of q and k, then neox rotary embedding),
in float32 throughout (float64 for float64 inputs), rounded once."""

import torch


def _norm_rope(x, w, cos, sin, eps):
    acc = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(acc)
    xf = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps) * w.to(acc)
    half = x.shape[-1] // 2
    x1, x2 = xf[..., :half], xf[..., half:]
    c, s = cos[:, None, :].to(acc), sin[:, None, :].to(acc)
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def qk_norm_rope(q, k, q_weight, k_weight, cos_cache, sin_cache, positions, eps):
    cos = cos_cache[positions.long()]
    sin = sin_cache[positions.long()]
    return _norm_rope(q, q_weight, cos, sin, eps), _norm_rope(k, k_weight, cos, sin, eps)

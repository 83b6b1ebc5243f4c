"""Reference for rotary_embedding_bwd (neox style): the rotation by minus each token's angle, in float32
(float64 for float64 inputs), rounded once."""

import torch


def _unrotate(dy, cos, sin):
    acc = torch.promote_types(dy.dtype, torch.float32)
    half = dy.shape[-1] // 2
    d1, d2 = dy[..., :half].to(acc), dy[..., half:].to(acc)
    c, s = cos[:, None, :].to(acc), sin[:, None, :].to(acc)
    return torch.cat([d1 * c + d2 * s, d2 * c - d1 * s], dim=-1).to(dy.dtype)


def rotary_embedding_bwd(dq_out, dk_out, cos_cache, sin_cache, positions):
    cos = cos_cache[positions.long()]
    sin = sin_cache[positions.long()]
    return _unrotate(dq_out, cos, sin), _unrotate(dk_out, cos, sin)

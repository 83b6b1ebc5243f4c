"""One decode step of a Llama-style attention block, composed from the ops in mini_decode.ops.

Each of B sequences brings one new token (hidden state x[b]) at position positions[b], with that
many earlier tokens' keys and values already in the cache. Every op returns a tensor of x's dtype,
so h, qkv, the rotated q and k, and the attention output are rounded to that dtype between ops;
the output projection adds the residual x in float32 before its rounding. The reference rounds at
the same points.
"""

import torch

from mini_decode.ops.attention import decode_attention
from mini_decode.ops.linear import linear
from mini_decode.ops.rmsnorm import rms_norm
from mini_decode.ops.rotary import qkv_rotary


def decode_step(
    x: torch.Tensor,
    norm_weight: torch.Tensor,
    w_qkv: torch.Tensor,
    cos_sin: torch.Tensor,
    positions: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    w_o: torch.Tensor,
    eps: float,
) -> torch.Tensor:
    """x + attention(rope(rms_norm(x) * norm_weight @ w_qkv)) @ w_o for x (B, H), w_qkv
    (H, (HQ + 2 * HKV) * D), caches (B, HKV, CTX, D), w_o (HQ * D, H); returns (B, H)."""
    B = x.shape[0]
    num_kv_heads, head_dim = k_cache.shape[1], k_cache.shape[3]
    num_q_heads = w_qkv.shape[1] // head_dim - 2 * num_kv_heads
    h = rms_norm(x, norm_weight, eps)
    qkv = linear(h, w_qkv)
    q, k, v = qkv_rotary(qkv, cos_sin, positions, num_q_heads, num_kv_heads)
    o = decode_attention(q, k, v, k_cache, v_cache, positions)
    return linear(o.reshape(B, num_q_heads * head_dim), w_o, residual=x)

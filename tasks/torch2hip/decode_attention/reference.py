"""The operation to implement: one decode step of grouped-query attention over a contiguous KV cache."""

import torch


def decode_attention(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, lengths: torch.Tensor, scale: float
) -> torch.Tensor:
    compute = torch.promote_types(q.dtype, torch.float32)
    batch, heads, dim = q.shape
    kv_heads, capacity = k_cache.shape[1], k_cache.shape[2]
    group = heads // kv_heads  # query head h reads KV head h // group
    qg = q.to(compute).reshape(batch, kv_heads, group, dim)
    scores = torch.einsum("bkgd,bksd->bkgs", qg, k_cache.to(compute)) * scale
    valid = torch.arange(capacity, device=q.device)[None, :] < lengths[:, None]  # (batch, capacity)
    scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = torch.einsum("bkgs,bksd->bkgd", weights, v_cache.to(compute))
    return out.reshape(batch, heads, dim).to(q.dtype)

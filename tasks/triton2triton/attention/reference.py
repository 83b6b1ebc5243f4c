"""Reference for causal attention, in float32 (float64 for float64 inputs), rounded once at the end."""

import math

import torch


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    acc = torch.promote_types(q.dtype, torch.float32)
    S, D = q.shape[-2], q.shape[-1]
    scores = torch.matmul(q.to(acc), k.to(acc).transpose(-1, -2)) / math.sqrt(D)
    future = torch.ones(S, S, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(future, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v.to(acc)).to(q.dtype)

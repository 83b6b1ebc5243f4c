"""Reference for gqa_prefill_attention: causal attention with shared KV heads, in float32 (float64
for float64 inputs), rounded once."""

import math

import torch


def gqa_prefill_attention(q, k, v):
    acc = torch.promote_types(q.dtype, torch.float32)
    B, HQ, S, D = q.shape
    group = HQ // k.shape[1]
    kf = k.to(acc).repeat_interleave(group, dim=1)
    vf = v.to(acc).repeat_interleave(group, dim=1)
    scores = torch.matmul(q.to(acc), kf.transpose(-1, -2)) / math.sqrt(D)
    future = torch.ones(S, S, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(future, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), vf).to(q.dtype)

"""Reference for block_sparse_attention: dense scores in float32 (float64 for float64 inputs) with the block
layout expanded to a mask; query rows that attend to nothing give 0."""

import math

import torch


def block_sparse_attention(q, k, v, layout):
    acc = torch.promote_types(q.dtype, torch.float32)
    D = q.shape[-1]
    scores = torch.matmul(q.to(acc), k.to(acc).transpose(-1, -2)) / math.sqrt(D)
    allowed = (layout != 0).repeat_interleave(64, dim=1).repeat_interleave(64, dim=2)
    scores = scores.masked_fill(~allowed[None], float("-inf"))
    p = torch.softmax(scores, dim=-1)
    p = torch.nan_to_num(p, nan=0.0)
    return torch.matmul(p, v.to(acc)).to(q.dtype)

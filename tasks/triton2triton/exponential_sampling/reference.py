"""Reference for exponential_sampling: the first index of the largest probs / q quotient of each row,
in float32 (float64 for float64 inputs)."""

import torch


def exponential_sampling(probs, q):
    acc = torch.promote_types(probs.dtype, torch.float32)
    score = probs.to(acc) / q.to(acc)
    best = score.max(dim=1, keepdim=True).values
    V = score.shape[1]
    cols = torch.arange(V, device=score.device).expand_as(score)
    first = torch.where(score == best, cols, V).min(dim=1).values
    return first.to(torch.int32)

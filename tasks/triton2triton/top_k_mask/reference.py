"""Reference for top_k_mask: keep the logits at least as large as the row's K-th largest, -inf elsewhere."""

import torch


def top_k_mask(x, K):
    threshold = torch.topk(x, K, dim=-1).values[:, -1:]
    return torch.where(x >= threshold, x, torch.full_like(x, float("-inf")))

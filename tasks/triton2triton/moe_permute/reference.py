"""Reference for moe_permute: the token row of every real routing slot, zeros for padding slots."""

import torch


def moe_permute(x, sorted_ids, K):
    T, H = x.shape
    ids = sorted_ids.long()
    real = ids < T * K
    out = torch.zeros((ids.shape[0], H), dtype=x.dtype, device=x.device)
    out[real] = x[ids[real] // K]
    return out

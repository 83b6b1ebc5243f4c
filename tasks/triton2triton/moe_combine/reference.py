"""Reference for moe_combine: the routing-weighted sum of each token's expert-output rows, in float32
(float64 for float64 inputs), rounded once."""

import torch


def moe_combine(expert_out, inv_perm, weights):
    acc = torch.promote_types(expert_out.dtype, torch.float32)
    rows = expert_out.to(acc)[inv_perm.long()]  # (T, K, H)
    out = (rows * weights.to(acc)[:, :, None]).sum(dim=1)
    return out.to(expert_out.dtype)

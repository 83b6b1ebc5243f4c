"""The combine step of a mixture-of-experts layer: each token's output is the routing-weighted sum
of the rows its top-k experts produced, gathered from the expert-sorted rows through the inverse
permutation. In (at least) float32, rounded once to the rows' dtype."""

import torch


def moe_combine(expert_out: torch.Tensor, inv_perm: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(expert_out.dtype, torch.float32)
    rows = expert_out.to(compute)[inv_perm.long()]  # (T, K, D)
    out = (rows * weights.to(compute)[..., None]).sum(dim=1)
    return out.to(expert_out.dtype)

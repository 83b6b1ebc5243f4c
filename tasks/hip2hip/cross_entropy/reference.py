"""Per-row cross-entropy of bfloat16 logits against integer labels, in (at least) float32; labels
outside [0, V) are ignored (loss 0)."""

import torch


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(logits.dtype, torch.float32)
    V = logits.shape[-1]
    lf = logits.to(compute)
    lse = torch.logsumexp(lf, dim=-1)
    valid = (labels >= 0) & (labels < V)
    picked = lf.gather(1, labels.clamp(0, V - 1).long().unsqueeze(1)).squeeze(1)
    return torch.where(valid, lse - picked, torch.zeros_like(lse))

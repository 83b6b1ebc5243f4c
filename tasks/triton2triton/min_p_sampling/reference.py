"""Reference for min_p_sampling: the min-p filter decided in float32 exactly as the task states it,
then the tempered softmax over the kept logits (float32; float64 for float64 inputs)."""

import torch


def min_p_sampling(logits, temperature, log_min_p):
    acc = torch.promote_types(logits.dtype, torch.float32)
    # The keep decision is defined on float32 values, whatever the precision of the probabilities.
    x32 = logits.to(torch.float32)
    d32 = x32 - x32.max(dim=-1, keepdim=True).values
    keep = d32 >= (temperature.to(torch.float32) * log_min_p.to(torch.float32))[:, None]
    x = logits.to(acc)
    e = torch.exp((x - x.max(dim=-1, keepdim=True).values) / temperature.to(acc)[:, None])
    e = torch.where(keep, e, torch.zeros((), dtype=acc, device=logits.device))
    return (e / e.sum(dim=-1, keepdim=True)).to(torch.promote_types(acc, torch.float32))

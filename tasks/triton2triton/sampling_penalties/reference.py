"""Reference for sampling_penalties: per-row token counts, then the penalties where a count is
positive, in float32 (float64 for float64 logits), rounded once."""

import torch


def sampling_penalties(logits, tokens, rep, freq, pres):
    acc = torch.promote_types(logits.dtype, torch.float32)
    x = logits.to(acc)
    counts = torch.zeros(x.shape, dtype=acc, device=x.device)
    counts.scatter_add_(1, tokens.long(), torch.ones(tokens.shape, dtype=acc, device=x.device))
    seen = counts > 0
    penalised = torch.where(x > 0, x / rep, x * rep) - freq * counts - pres
    return torch.where(seen, penalised, x).to(logits.dtype)

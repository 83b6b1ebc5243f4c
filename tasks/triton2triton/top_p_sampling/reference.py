"""Reference for top_p_sampling: float64 tempered probabilities, the mass of strictly larger logits by
sorting, and the kept tokens renormalised (float32 output; float64 for float64 inputs)."""

import torch


def top_p_sampling(logits, temperature, top_p):
    M, V = logits.shape
    x = logits.to(torch.float64)
    e = torch.exp((x - x.max(dim=-1, keepdim=True).values) / temperature.to(torch.float64)[:, None])
    z = e.sum(dim=-1, keepdim=True)
    xs, order = torch.sort(x, dim=-1, descending=True)
    csum = torch.cumsum(torch.gather(e, 1, order), dim=-1)
    # Tokens strictly above x[j]: the sorted prefix before x[j]'s group of equal logits.
    ascending = xs.flip(-1).contiguous()
    above = V - torch.searchsorted(ascending, x.contiguous(), right=True)
    padded = torch.cat([torch.zeros((M, 1), dtype=torch.float64, device=x.device), csum], dim=-1)
    s = torch.gather(padded, 1, above)
    keep = s < top_p.to(torch.float64)[:, None] * z
    kept = torch.where(keep, e, torch.zeros((), dtype=torch.float64, device=x.device))
    probs = kept / kept.sum(dim=-1, keepdim=True)
    return probs.to(torch.promote_types(logits.dtype, torch.float32))

"""Reference for gather_logprobs: log-softmax at the sampled ids and the entropy of each row, at a
temperature, in float32 (float64 for float64 inputs). The entropy is formed from z - max(z), so that a
peaked row does not lose it to cancellation."""

import torch


def gather_logprobs(logits: torch.Tensor, ids: torch.Tensor, temperature: float = 0.8):
    acc = torch.promote_types(logits.dtype, torch.float32)
    z = logits.to(acc) / temperature
    zs = z - z.amax(dim=-1, keepdim=True)
    log_total = torch.logsumexp(zs, dim=-1)
    picked = zs.gather(1, ids.long().unsqueeze(1)).squeeze(1)
    p = torch.exp(zs - log_total[:, None])
    entropy = log_total - (p * zs).sum(dim=-1)
    return picked - log_total, entropy

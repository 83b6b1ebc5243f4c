"""Reference for jsd_loss: the beta-weighted Jensen-Shannon divergence of each row, in float32 (float64 for
float64 inputs), with log Mix formed as a logaddexp."""

import math

import torch


def jsd_loss(log_p: torch.Tensor, log_q: torch.Tensor, beta: float = 0.3) -> torch.Tensor:
    acc = torch.promote_types(log_p.dtype, torch.float32)
    lp, lq = log_p.to(acc), log_q.to(acc)
    log_mix = torch.logaddexp(lp + math.log(beta), lq + math.log1p(-beta))
    terms = beta * torch.exp(lp) * (lp - log_mix) + (1.0 - beta) * torch.exp(lq) * (lq - log_mix)
    return terms.sum(dim=-1)

"""Reference for mini_head's head_logprobs: float32 math (float64 for float64 inputs), with h rounded
to the input dtype at the same point as mini_head/head.py."""

import torch


def head_logprobs(x, norm_weight, w_head, eps):
    acc = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(acc)
    h = (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps) * norm_weight.to(acc)).to(x.dtype)
    logits = torch.matmul(h.to(acc), w_head.to(acc).t())
    return torch.log_softmax(logits, dim=-1).to(torch.promote_types(acc, torch.float32))

"""Reference for attention_bwd: the causal attention backward from the saved output and log-sum-exp,
in float32 (float64 for float64 inputs), each gradient rounded once."""

import math

import torch


def attention_bwd(q, k, v, o, do, lse):
    acc = torch.promote_types(q.dtype, torch.float32)
    qf, kf, vf, of, dof = (t.to(acc) for t in (q, k, v, o, do))
    S, D = q.shape[1], q.shape[2]
    scale = 1.0 / math.sqrt(D)
    causal = torch.ones(S, S, dtype=torch.bool, device=q.device).tril()
    s = qf @ kf.transpose(1, 2) * scale
    p = torch.where(causal, torch.exp(s - lse.to(acc)[:, :, None]), torch.zeros((), dtype=acc, device=q.device))
    dv = p.transpose(1, 2) @ dof
    dp = dof @ vf.transpose(1, 2)
    delta = (of * dof).sum(dim=-1, keepdim=True)
    ds = p * (dp - delta)
    dq = ds @ kf * scale
    dk = ds.transpose(1, 2) @ qf * scale
    return dq.to(q.dtype), dk.to(q.dtype), dv.to(q.dtype)

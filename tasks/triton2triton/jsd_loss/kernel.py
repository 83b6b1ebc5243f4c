"""jsd_loss: per-row beta-weighted Jensen-Shannon divergence of two (M, V) log-probability matrices."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _jsd_terms_kernel(lp_ptr, lq_ptr, t_ptr, total, beta, log_beta, log_1mbeta, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    lp = tl.load(lp_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    lq = tl.load(lq_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    a = lp + log_beta
    b = lq + log_1mbeta
    hi = tl.maximum(a, b)
    log_mix = hi + tl.log(1.0 + tl.exp(tl.minimum(a, b) - hi))
    t = beta * tl.exp(lp) * (lp - log_mix) + (1.0 - beta) * tl.exp(lq) * (lq - log_mix)
    tl.store(t_ptr + offs, t, mask=mask)


@triton.jit
def _row_sum_kernel(t_ptr, out_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(t_ptr + row * V + cols, mask=cols < V, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def jsd_loss(log_p: torch.Tensor, log_q: torch.Tensor, beta: float = 0.3) -> torch.Tensor:
    """(M,) float32 divergence of each row of contiguous (M, V) log-probabilities log_p and log_q."""
    M, V = log_p.shape
    terms = torch.empty((M, V), dtype=torch.float32, device=log_p.device)
    block = 1024
    _jsd_terms_kernel[(triton.cdiv(M * V, block),)](
        log_p, log_q, terms, M * V, beta, math.log(beta), math.log1p(-beta), BLOCK=block, num_warps=4
    )
    loss = torch.empty(M, dtype=torch.float32, device=log_p.device)
    _row_sum_kernel[(M,)](terms, loss, V, BLOCK=1024, num_warps=4)
    return loss

"""exponential_sampling: one token per row, the argmax of probs / q (the exponential race)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _sample_kernel(p_ptr, q_ptr, out_ptr, V, BLOCK: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    best = tl.full([], -1.0, dtype=tl.float32)
    best_idx = tl.zeros([], dtype=tl.int32)
    for start in range(0, V, BLOCK):
        cols = start + offs
        mask = cols < V
        p = tl.load(p_ptr + b * V + cols, mask=mask, other=0.0)
        q = tl.load(q_ptr + b * V + cols, mask=mask, other=1.0)
        s = tl.where(mask, tl.div_rn(p, q), -1.0)
        m = tl.max(s, axis=0)
        i = tl.min(tl.where(s == m, cols, V), axis=0)
        # A later block replaces the running best only with a strictly larger quotient.
        best_idx = tl.where(m > best, i, best_idx)
        best = tl.maximum(best, m)
    tl.store(out_ptr + b, best_idx)


def exponential_sampling(probs, q):
    """(B,) int32: for each row, the first column of the largest probs / q."""
    B, V = probs.shape
    out = torch.empty((B,), dtype=torch.int32, device=probs.device)
    _sample_kernel[(B,)](probs, q, out, V, BLOCK=2048, num_warps=8)
    return out

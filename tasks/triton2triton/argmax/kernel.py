"""argmax: greedy sampling, the index of the largest logit of each row (the first one on ties)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _argmax_kernel(x_ptr, out_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    best = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    best_i = tl.zeros([BLOCK], dtype=tl.int32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * V + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        better = x > best
        best = tl.where(better, x, best)
        best_i = tl.where(better, cols, best_i)
    m = tl.max(best, axis=0)
    # Each lane kept its first maximum; the smallest index among lanes holding the row maximum wins.
    idx = tl.min(tl.where(best == m, best_i, V), axis=0)
    tl.store(out_ptr + row, idx.to(tl.int64))


def argmax(x):
    """Index of the maximum of each row of contiguous (M, V) logits; (M,) int64."""
    M, V = x.shape
    out = torch.empty(M, dtype=torch.int64, device=x.device)
    _argmax_kernel[(M,)](x, out, V, BLOCK=2048, num_warps=8)
    return out

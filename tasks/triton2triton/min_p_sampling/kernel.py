"""min_p_sampling: min-p filtering of a decode batch's logits, then the tempered, renormalised softmax."""

import torch
import triton
import triton.language as tl


@triton.jit
def _min_p_kernel(x_ptr, t_ptr, lmp_ptr, out_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * V
    offs = tl.arange(0, BLOCK)
    t = tl.load(t_ptr + row)
    thr = t * tl.load(lmp_ptr + row)
    # Pass 1: the row maximum.
    mx = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        mx = tl.maximum(mx, x)
    m = tl.max(mx, axis=0)
    # Pass 2: the sum of the kept terms.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        d = x - m
        acc += tl.where(d >= thr, tl.exp(d / t), 0.0)
    inv = 1.0 / tl.sum(acc, axis=0)
    # Pass 3: the normalised probabilities.
    for start in range(0, V, BLOCK):
        cols = start + offs
        mask = cols < V
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        d = x - m
        p = tl.where(d >= thr, tl.exp(d / t) * inv, 0.0)
        tl.store(out_ptr + row * V + cols, p, mask=mask)


def min_p_sampling(logits, temperature, log_min_p):
    """(M, V) float32 probabilities: softmax(logits / T) restricted to the min-p set of each row."""
    M, V = logits.shape
    out = torch.empty((M, V), dtype=torch.float32, device=logits.device)
    _min_p_kernel[(M,)](logits, temperature, log_min_p, out, V, BLOCK=4096, num_warps=8)
    return out

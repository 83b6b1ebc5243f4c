"""top_p_sampling: nucleus (top-p) filtering of a decode batch's logits, then the tempered,
renormalised probabilities of the kept tokens."""

import torch
import triton
import triton.language as tl


@triton.jit
def _exp64(d):
    """exp(d) in float64 for d <= 0 (0 below -708)."""
    n = tl.floor(d * 1.4426950408889634 + 0.5)
    r = (d - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    n = tl.maximum(n, -1000.0)
    scale = ((n.to(tl.int64) + 1023) << 52).to(tl.float64, bitcast=True)
    return tl.where(d < -708.0, 0.0, p * scale)


@triton.jit
def _key(x):
    """An int64 that orders like the float32 x."""
    b = x.to(tl.int32, bitcast=True)
    return tl.where(b >= 0, b, b ^ 0x7FFFFFFF).to(tl.int64)


@triton.jit
def _unkey(k):
    k = k.to(tl.int32)
    return tl.where(k >= 0, k, k ^ 0x7FFFFFFF).to(tl.float32, bitcast=True)


@triton.jit
def _top_p_kernel(x_ptr, t_ptr, p_ptr, out_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * V
    offs = tl.arange(0, BLOCK)
    temp = tl.load(t_ptr + row).to(tl.float64)
    # Pass 1: the row's largest and smallest logits.
    mx = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    mn = tl.full([BLOCK], float("inf"), dtype=tl.float32)
    for start in range(0, V, BLOCK):
        cols = start + offs
        mask = cols < V
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        mx = tl.maximum(mx, tl.where(mask, x, float("-inf")))
        mn = tl.minimum(mn, tl.where(mask, x, float("inf")))
    m = tl.max(mx, axis=0)
    m64 = m.to(tl.float64)
    # Pass 2: the normaliser, and the mass the kept tokens must stay under.
    acc = tl.zeros([BLOCK], dtype=tl.float64)
    for start in range(0, V, BLOCK):
        cols = start + offs
        mask = cols < V
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32).to(tl.float64)
        acc += tl.where(mask, _exp64((x - m64) / temp), 0.0)
    z = tl.sum(acc, axis=0)
    limit = tl.load(p_ptr + row).to(tl.float64) * z
    # The cut: the smallest float32 c with mass(logits > c) < limit; token j is kept when x[j] >= c.
    # Bisection over the ordered keys, keeping mass(> key lo) >= limit and mass(> key hi) < limit.
    lo = _key(tl.min(mn, axis=0)) - 1
    hi = _key(m)
    kept_mass = z
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        c = _unkey(mid)
        acc = tl.zeros([BLOCK], dtype=tl.float64)
        for start in range(0, V, BLOCK):
            cols = start + offs
            mask = cols < V
            x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
            acc += tl.where(mask & (x > c), _exp64((x.to(tl.float64) - m64) / temp), 0.0)
        above = tl.sum(acc, axis=0)
        if above < limit:
            hi = mid
        else:
            lo = mid
            kept_mass = above
    cut = _unkey(hi)
    inv = 1.0 / kept_mass
    # Pass 3: the renormalised probabilities of the kept tokens.
    for start in range(0, V, BLOCK):
        cols = start + offs
        mask = cols < V
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        e = _exp64((x.to(tl.float64) - m64) / temp)
        tl.store(out_ptr + row * V + cols, tl.where(x >= cut, e * inv, 0.0).to(tl.float32), mask=mask)


def top_p_sampling(logits, temperature, top_p):
    """(M, V) float32 probabilities: softmax(logits / T) restricted to the top-p nucleus of each row."""
    M, V = logits.shape
    out = torch.empty((M, V), dtype=torch.float32, device=logits.device)
    _top_p_kernel[(M,)](logits, temperature, top_p, out, V, BLOCK=4096, num_warps=8)
    return out

"""rotary_embedding: neox-style rotary position embedding of queries and keys."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rope_head_kernel(x_ptr, cos_ptr, sin_ptr, pos_ptr, out_ptr, H, HALF: tl.constexpr,
                      BLOCK: tl.constexpr):
    t = tl.program_id(0)
    h = tl.program_id(1)
    offs = tl.arange(0, BLOCK)
    mask = offs < HALF
    pos = tl.load(pos_ptr + t)
    c = tl.load(cos_ptr + pos * HALF + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(sin_ptr + pos * HALF + offs, mask=mask, other=0.0).to(tl.float32)
    base = (t.to(tl.int64) * H + h) * (2 * HALF)
    x1 = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + base + HALF + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + base + offs, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_ptr + base + HALF + offs, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=mask)


def _rope(x, cos_cache, sin_cache, positions):
    T, H, D = x.shape
    out = torch.empty_like(x)
    half = D // 2
    _rope_head_kernel[(T, H)](x, cos_cache, sin_cache, positions, out, H, HALF=half,
                              BLOCK=triton.next_power_of_2(half), num_warps=1)
    return out


def rotary_embedding(q, k, cos_cache, sin_cache, positions):
    """Rotated copies of q (T, HQ, D) and k (T, HKV, D) at each token's position."""
    return _rope(q, cos_cache, sin_cache, positions), _rope(k, cos_cache, sin_cache, positions)

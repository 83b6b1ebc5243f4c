"""qk_norm_rope: per-head RMSNorm of queries and keys (Qwen3's q_norm / k_norm), then rotary embedding."""

import torch
import triton
import triton.language as tl


@triton.jit
def _head_norm_rope_kernel(x_ptr, w_ptr, cos_ptr, sin_ptr, pos_ptr, out_ptr, H, eps, HALF: tl.constexpr):
    # One program per (token, head): the head's two halves are normalised and rotated in registers.
    t = tl.program_id(0)
    h = tl.program_id(1)
    offs = tl.arange(0, HALF)
    base = (t.to(tl.int64) * H + h) * (2 * HALF)
    x1 = tl.load(x_ptr + base + offs).to(tl.float32)
    x2 = tl.load(x_ptr + base + HALF + offs).to(tl.float32)
    rstd = 1.0 / tl.sqrt((tl.sum(x1 * x1, axis=0) + tl.sum(x2 * x2, axis=0)) / (2 * HALF) + eps)
    n1 = x1 * rstd * tl.load(w_ptr + offs).to(tl.float32)
    n2 = x2 * rstd * tl.load(w_ptr + HALF + offs).to(tl.float32)
    pos = tl.load(pos_ptr + t)
    c = tl.load(cos_ptr + pos * HALF + offs)
    s = tl.load(sin_ptr + pos * HALF + offs)
    tl.store(out_ptr + base + offs, (n1 * c - n2 * s).to(out_ptr.dtype.element_ty))
    tl.store(out_ptr + base + HALF + offs, (n2 * c + n1 * s).to(out_ptr.dtype.element_ty))


def _norm_rope(x, w, cos_cache, sin_cache, positions, eps):
    T, H, D = x.shape
    out = torch.empty_like(x)
    _head_norm_rope_kernel[(T, H)](x, w, cos_cache, sin_cache, positions, out, H, eps, HALF=D // 2, num_warps=1)
    return out


def qk_norm_rope(q, k, q_weight, k_weight, cos_cache, sin_cache, positions, eps):
    """(q_out, k_out): each head of q (T, HQ, D) and k (T, HKV, D) RMS-normalised, weighted and rotated."""
    return (_norm_rope(q, q_weight, cos_cache, sin_cache, positions, eps),
            _norm_rope(k, k_weight, cos_cache, sin_cache, positions, eps))

"""qk_norm_rope: per-head RMSNorm of queries and keys (Qwen3's q_norm / k_norm), then rotary embedding."""

import torch
import triton
import triton.language as tl


@triton.jit
def _head_norm_kernel(x_ptr, w_ptr, out_ptr, eps, D: tl.constexpr):
    head = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, D)
    x = tl.load(x_ptr + head * D + offs).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    w = tl.load(w_ptr + offs).to(tl.float32)
    tl.store(out_ptr + head * D + offs, x * rstd * w)


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, sin_ptr, pos_ptr, out_ptr, H, HALF: tl.constexpr):
    t = tl.program_id(0)
    h = tl.program_id(1)
    offs = tl.arange(0, HALF)
    pos = tl.load(pos_ptr + t)
    c = tl.load(cos_ptr + pos * HALF + offs)
    s = tl.load(sin_ptr + pos * HALF + offs)
    base = (t.to(tl.int64) * H + h) * (2 * HALF)
    x1 = tl.load(x_ptr + base + offs)
    x2 = tl.load(x_ptr + base + HALF + offs)
    tl.store(out_ptr + base + offs, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty))
    tl.store(out_ptr + base + HALF + offs, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty))


def _norm_rope(x, w, cos_cache, sin_cache, positions, eps):
    T, H, D = x.shape
    normed = torch.empty((T, H, D), dtype=torch.float32, device=x.device)
    _head_norm_kernel[(T * H,)](x, w, normed, eps, D=D, num_warps=1)
    out = torch.empty_like(x)
    _rope_kernel[(T, H)](normed, cos_cache, sin_cache, positions, out, H, HALF=D // 2, num_warps=1)
    return out


def qk_norm_rope(q, k, q_weight, k_weight, cos_cache, sin_cache, positions, eps):
    """(q_out, k_out): each head of q (T, HQ, D) and k (T, HKV, D) RMS-normalised, weighted and rotated."""
    return (_norm_rope(q, q_weight, cos_cache, sin_cache, positions, eps),
            _norm_rope(k, k_weight, cos_cache, sin_cache, positions, eps))

"""qk_norm_rope with one program per token for all its q and k heads.

The baseline fuses norm and rotation but runs one single-warp program per (token, head), and
one launch for q and another for k: 655k programs of 256 bytes each for a 16k-token batch, each
reloading the token's cos/sin row, so the GPU spends its time starting tiny programs with a few
bytes in flight rather than moving data. Here one launch covers q and k; each program takes a
token and all its heads as [heads, D/2] halves (8 KB and more per program), computes each
head's mean square from both halves, and rotates the normalised values in registers with the
token's cos/sin row loaded once.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _norm_rope_tile(x_ptr, out_ptr, w_ptr, t, H, c, s, eps, HALF: tl.constexpr, HP: tl.constexpr):
    offs_h = tl.arange(0, HP)
    offs_d = tl.arange(0, HALF)
    mask = offs_h[:, None] < H
    ptrs = (t.to(tl.int64) * H + offs_h[:, None]) * (2 * HALF) + offs_d[None, :]
    x1 = tl.load(x_ptr + ptrs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + ptrs + HALF, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt((tl.sum(x1 * x1, axis=1) + tl.sum(x2 * x2, axis=1)) / (2 * HALF) + eps)
    w1 = tl.load(w_ptr + offs_d).to(tl.float32)
    w2 = tl.load(w_ptr + HALF + offs_d).to(tl.float32)
    n1 = x1 * rstd[:, None] * w1[None, :]
    n2 = x2 * rstd[:, None] * w2[None, :]
    tl.store(out_ptr + ptrs, (n1 * c - n2 * s).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_ptr + ptrs + HALF, (n2 * c + n1 * s).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _qk_norm_rope_kernel(q_ptr, k_ptr, qw_ptr, kw_ptr, cos_ptr, sin_ptr, pos_ptr, qo_ptr, ko_ptr, HQ, HKV, eps,
                         HALF: tl.constexpr, HQP: tl.constexpr, HKP: tl.constexpr):
    t = tl.program_id(0)
    offs_d = tl.arange(0, HALF)
    pos = tl.load(pos_ptr + t)
    c = tl.load(cos_ptr + pos * HALF + offs_d)[None, :]
    s = tl.load(sin_ptr + pos * HALF + offs_d)[None, :]
    _norm_rope_tile(q_ptr, qo_ptr, qw_ptr, t, HQ, c, s, eps, HALF, HQP)
    _norm_rope_tile(k_ptr, ko_ptr, kw_ptr, t, HKV, c, s, eps, HALF, HKP)


def qk_norm_rope(q, k, q_weight, k_weight, cos_cache, sin_cache, positions, eps):
    T, HQ, D = q.shape
    HKV = k.shape[1]
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    _qk_norm_rope_kernel[(T,)](q, k, q_weight, k_weight, cos_cache, sin_cache, positions, q_out, k_out, HQ, HKV,
                               eps, HALF=D // 2, HQP=triton.next_power_of_2(HQ), HKP=triton.next_power_of_2(HKV),
                               num_warps=4)
    return q_out, k_out

"""rotary_embedding_bwd: gradients of neox-style rotary embedding with respect to queries and keys."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rope_bwd_head_kernel(dy_ptr, cos_ptr, sin_ptr, pos_ptr, dx_ptr, H, HALF: tl.constexpr, BLOCK: tl.constexpr):
    t = tl.program_id(0)
    h = tl.program_id(1)
    offs = tl.arange(0, BLOCK)
    mask = offs < HALF
    pos = tl.load(pos_ptr + t)
    c = tl.load(cos_ptr + pos * HALF + offs, mask=mask, other=0.0)
    s = tl.load(sin_ptr + pos * HALF + offs, mask=mask, other=0.0)
    base = (t.to(tl.int64) * H + h) * (2 * HALF)
    d1 = tl.load(dy_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    d2 = tl.load(dy_ptr + base + HALF + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(dx_ptr + base + offs, (d1 * c + d2 * s).to(dx_ptr.dtype.element_ty), mask=mask)
    tl.store(dx_ptr + base + HALF + offs, (d2 * c - d1 * s).to(dx_ptr.dtype.element_ty), mask=mask)


def _rope_bwd(dy, cos_cache, sin_cache, positions):
    T, H, D = dy.shape
    dx = torch.empty_like(dy)
    half = D // 2
    _rope_bwd_head_kernel[(T, H)](
        dy, cos_cache, sin_cache, positions, dx, H, HALF=half, BLOCK=triton.next_power_of_2(half), num_warps=1
    )
    return dx


def rotary_embedding_bwd(dq_out, dk_out, cos_cache, sin_cache, positions):
    """(dq, dk): the upstream gradients rotated back by each token's angle."""
    return (_rope_bwd(dq_out, cos_cache, sin_cache, positions), _rope_bwd(dk_out, cos_cache, sin_cache, positions))

"""rotary_embedding_bwd over tiles of tokens that rotates the gradients forward by each token's
angle (the forward pass's formula) instead of back by it."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rotate_heads(dy_ptr, dx_ptr, tok, tmask, cols, cmask, c, s, H, HALF: tl.constexpr):
    for h in range(H):
        base = (tok * H + h) * (2 * HALF)
        ptr = base[:, None] + cols[None, :]
        mask = tmask[:, None] & cmask[None, :]
        d1 = tl.load(dy_ptr + ptr, mask=mask, other=0.0).to(tl.float32)
        d2 = tl.load(dy_ptr + ptr + HALF, mask=mask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + ptr, (d1 * c - d2 * s).to(dx_ptr.dtype.element_ty), mask=mask)
        tl.store(dx_ptr + ptr + HALF, (d2 * c + d1 * s).to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rope_bwd_kernel(
    dq_ptr,
    dk_ptr,
    cos_ptr,
    sin_ptr,
    pos_ptr,
    dqx_ptr,
    dkx_ptr,
    T,
    HQ,
    HKV,
    HALF: tl.constexpr,
    BLOCK_T: tl.constexpr,
    BLOCK_H: tl.constexpr,
):
    tok = tl.program_id(0).to(tl.int64) * BLOCK_T + tl.arange(0, BLOCK_T)
    tmask = tok < T
    cols = tl.arange(0, BLOCK_H)
    cmask = cols < HALF
    pos = tl.load(pos_ptr + tok, mask=tmask, other=0)
    cs_ptr = pos[:, None] * HALF + cols[None, :]
    cs_mask = tmask[:, None] & cmask[None, :]
    c = tl.load(cos_ptr + cs_ptr, mask=cs_mask, other=0.0)
    s = tl.load(sin_ptr + cs_ptr, mask=cs_mask, other=0.0)
    _rotate_heads(dq_ptr, dqx_ptr, tok, tmask, cols, cmask, c, s, HQ, HALF)
    _rotate_heads(dk_ptr, dkx_ptr, tok, tmask, cols, cmask, c, s, HKV, HALF)


def rotary_embedding_bwd(dq_out, dk_out, cos_cache, sin_cache, positions):
    T, HQ, D = dq_out.shape
    HKV = dk_out.shape[1]
    dq = torch.empty_like(dq_out)
    dk = torch.empty_like(dk_out)
    half = D // 2
    block_t = 16
    _rope_bwd_kernel[(triton.cdiv(T, block_t),)](
        dq_out,
        dk_out,
        cos_cache,
        sin_cache,
        positions,
        dq,
        dk,
        T,
        HQ,
        HKV,
        HALF=half,
        BLOCK_T=block_t,
        BLOCK_H=triton.next_power_of_2(half),
        num_warps=4,
    )
    return dq, dk

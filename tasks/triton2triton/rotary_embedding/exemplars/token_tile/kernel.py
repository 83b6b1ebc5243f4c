"""rotary_embedding with one program per token for every head of q and k.

The baseline launches one tiny program per (token, head) and two kernels (q, then k): each
program moves a few hundred bytes and reloads the token's cos/sin row, so launch and scheduling
overhead and the duplicated table reads dominate. Here one launch covers q and k, and each
program rotates a block of tokens with all their heads as [heads, D/2] tiles, loading cos/sin
once per token.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _rotate_tile(x_ptr, out_ptr, t, H, c, s, HALF: tl.constexpr, HP: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_h = tl.arange(0, HP)
    offs_d = tl.arange(0, BLOCK_D)
    mask = (offs_h[:, None] < H) & (offs_d[None, :] < HALF)
    ptrs = (t.to(tl.int64) * H + offs_h[:, None]) * (2 * HALF) + offs_d[None, :]
    x1 = tl.load(x_ptr + ptrs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + ptrs + HALF, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + ptrs, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_ptr + ptrs + HALF, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rope_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, pos_ptr, qo_ptr, ko_ptr, T, HQ, HKV,
                 HALF: tl.constexpr, HQP: tl.constexpr, HKP: tl.constexpr, BLOCK_D: tl.constexpr,
                 TOKENS: tl.constexpr):
    offs_d = tl.arange(0, BLOCK_D)
    dmask = offs_d < HALF
    for i in range(TOKENS):
        t = tl.program_id(0) * TOKENS + i
        if t < T:
            pos = tl.load(pos_ptr + t)
            c = tl.load(cos_ptr + pos * HALF + offs_d, mask=dmask, other=0.0).to(tl.float32)[None, :]
            s = tl.load(sin_ptr + pos * HALF + offs_d, mask=dmask, other=0.0).to(tl.float32)[None, :]
            _rotate_tile(q_ptr, qo_ptr, t, HQ, c, s, HALF, HQP, BLOCK_D)
            _rotate_tile(k_ptr, ko_ptr, t, HKV, c, s, HALF, HKP, BLOCK_D)


def rotary_embedding(q, k, cos_cache, sin_cache, positions):
    T, HQ, D = q.shape
    HKV = k.shape[1]
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    tokens = 2
    _rope_kernel[(triton.cdiv(T, tokens),)](
        q, k, cos_cache, sin_cache, positions, q_out, k_out, T, HQ, HKV, HALF=D // 2,
        HQP=triton.next_power_of_2(HQ), HKP=triton.next_power_of_2(HKV),
        BLOCK_D=triton.next_power_of_2(D // 2), TOKENS=tokens, num_warps=4)
    return q_out, k_out

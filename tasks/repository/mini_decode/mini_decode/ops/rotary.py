"""Split a fused QKV row into heads and apply rotary position embeddings to q and k."""

import torch
import triton
import triton.language as tl


@triton.jit
def _qkv_rotary_kernel(qkv_ptr, cos_sin_ptr, pos_ptr, q_ptr, k_ptr, v_ptr, HQ, HKV,
                       D: tl.constexpr, HALF: tl.constexpr):
    # One program per (token, head) of the fused row: heads [0, HQ) are q, [HQ, HQ + HKV) k, then v.
    b = tl.program_id(0)
    head = tl.program_id(1)
    width = (HQ + 2 * HKV) * D
    row = qkv_ptr + b.to(tl.int64) * width + head * D
    half = tl.arange(0, HALF)
    x1 = tl.load(row + half).to(tl.float32)
    x2 = tl.load(row + HALF + half).to(tl.float32)
    if head < HQ + HKV:
        pos = tl.load(pos_ptr + b).to(tl.int64)
        cos = tl.load(cos_sin_ptr + pos * D + half)
        sin = tl.load(cos_sin_ptr + pos * D + HALF + half)
        y1 = x1 * cos - x2 * sin
        y2 = x2 * cos + x1 * sin
        if head < HQ:
            out = q_ptr + (b.to(tl.int64) * HQ + head) * D
        else:
            out = k_ptr + (b.to(tl.int64) * HKV + head - HQ) * D
    else:
        y1 = x1
        y2 = x2
        out = v_ptr + (b.to(tl.int64) * HKV + head - HQ - HKV) * D
    tl.store(out + half, y1.to(q_ptr.dtype.element_ty))
    tl.store(out + HALF + half, y2.to(q_ptr.dtype.element_ty))


def qkv_rotary(qkv: torch.Tensor, cos_sin: torch.Tensor, positions: torch.Tensor, num_q_heads: int,
               num_kv_heads: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Split qkv (B, (HQ + 2 * HKV) * D) into q (B, HQ, D), k (B, HKV, D), v (B, HKV, D), rotating
    q and k (rotate-half: x1' = x1 cos - x2 sin, x2' = x2 cos + x1 sin, x1 and x2 the two halves of a
    head) by row positions[b] of cos_sin (P, D) float32, which holds cos in its first half and sin in
    its second. Rotated in float32, rounded once to qkv's dtype."""
    B, width = qkv.shape
    D = width // (num_q_heads + 2 * num_kv_heads)
    q = torch.empty((B, num_q_heads, D), dtype=qkv.dtype, device=qkv.device)
    k = torch.empty((B, num_kv_heads, D), dtype=qkv.dtype, device=qkv.device)
    v = torch.empty((B, num_kv_heads, D), dtype=qkv.dtype, device=qkv.device)
    _qkv_rotary_kernel[(B, num_q_heads + 2 * num_kv_heads)](qkv, cos_sin, positions, q, k, v, num_q_heads,
                                                             num_kv_heads, D=D, HALF=D // 2)
    return q, k, v

"""moe_permute in one pass, which reads the flattened routing slots as expert-major (s = k * T + t,
so the token is s % T) instead of token-major (s = t * K + k)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _permute_kernel(x_ptr, ids_ptr, out_ptr, T, H, K, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < H
    s = tl.load(ids_ptr + i)
    real = s < T * K
    t = tl.where(real, s % T, 0).to(tl.int64)
    v = tl.load(x_ptr + t * H + cols, mask=mask & real, other=0.0)
    tl.store(out_ptr + i * H + cols, v, mask=mask)


def moe_permute(x, sorted_ids, K):
    T, H = x.shape
    M = sorted_ids.shape[0]
    out = torch.empty((M, H), dtype=x.dtype, device=x.device)
    block = 16 * 128 // x.element_size()  # 16 bytes per thread, four warps
    _permute_kernel[(M, triton.cdiv(H, block))](x, sorted_ids, out, T, H, K, BLOCK=block, num_warps=4)
    return out

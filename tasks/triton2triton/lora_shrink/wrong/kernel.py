"""lora_shrink over 64-token tiles on tensor cores, which takes the adapter of each tile's first
token for the whole tile (right only where a tile's tokens share one adapter)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _shrink_kernel(x_ptr, a_ptr, idx_ptr, y_ptr, T, H, R, scale, IEEE: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr):
    tile = tl.program_id(0)
    rm = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    m_ok = rm < T
    adapter = tl.load(idx_ptr + tile * BLOCK_M)
    rr = tl.arange(0, BLOCK_R)
    acc = tl.zeros([BLOCK_M, BLOCK_R], dtype=tl.float32)
    if adapter >= 0:
        rk = tl.arange(0, BLOCK_K)
        rm_c = tl.minimum(rm, T - 1).to(tl.int64)
        rr_c = tl.minimum(rr, R - 1).to(tl.int64)
        x_ptrs = x_ptr + rm_c[:, None] * H + rk[None, :]
        a_ptrs = a_ptr + adapter.to(tl.int64) * R * H + rr_c[None, :] * H + rk[:, None]
        for k0 in range(0, H, BLOCK_K):
            xv = tl.load(x_ptrs, mask=rk[None, :] < H - k0, other=0.0)
            av = tl.load(a_ptrs, mask=rk[:, None] < H - k0, other=0.0)
            if IEEE:
                acc = tl.dot(xv, av, acc, input_precision="ieee")
            else:
                acc = tl.dot(xv, av, acc)
            x_ptrs += BLOCK_K
            a_ptrs += BLOCK_K
    store = m_ok[:, None] & (rr[None, :] < R)
    tl.store(y_ptr + rm.to(tl.int64)[:, None] * R + rr[None, :], (acc * scale).to(y_ptr.dtype.element_ty),
             mask=store)


def lora_shrink(x, lora_a, idx, scale):
    T, H = x.shape
    L, R, _ = lora_a.shape
    y = torch.empty((T, R), dtype=x.dtype, device=x.device)
    bm = 64
    bk = 32 if x.dtype == torch.float32 else 64
    _shrink_kernel[(triton.cdiv(T, bm),)](x, lora_a, idx, y, T, H, R, scale, IEEE=x.dtype == torch.float32,
                                          BLOCK_M=bm, BLOCK_R=max(16, triton.next_power_of_2(R)), BLOCK_K=bk,
                                          num_warps=4, num_stages=3)
    return y

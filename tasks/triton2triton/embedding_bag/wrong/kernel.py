"""embedding_bag with a bag's rows gathered as one tile, whose padded lanes (beyond the bag
length) load weight 1 and row 0: each bag whose length is not a multiple of the tile adds row 0."""

import torch
import triton
import triton.language as tl


@triton.jit
def _bag_kernel(idx_ptr, psw_ptr, w_ptr, out_ptr, L, D, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    cmask = cols < D
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for j0 in range(0, L, BLOCK_L):
        rj = j0 + tl.arange(0, BLOCK_L)
        jmask = rj < L
        rows = tl.load(idx_ptr + b * L + rj, mask=jmask, other=0)
        s = tl.load(psw_ptr + b * L + rj, mask=jmask, other=1.0)
        tile = tl.load(w_ptr + rows[:, None] * D + cols[None, :], mask=cmask[None, :], other=0.0)
        acc += tl.sum(tile.to(tl.float32) * s[:, None], axis=0)
    tl.store(out_ptr + b * D + cols, acc.to(out_ptr.dtype.element_ty), mask=cmask)


def embedding_bag(idx, psw, weight):
    B, L = idx.shape
    D = weight.shape[1]
    out = torch.empty((B, D), dtype=weight.dtype, device=weight.device)
    block_l = min(64, triton.next_power_of_2(L))
    block_d = min(256, triton.next_power_of_2(D))
    _bag_kernel[(B, triton.cdiv(D, block_d))](idx, psw, weight, out, L, D, BLOCK_L=block_l, BLOCK_D=block_d,
                                              num_warps=8 if block_l * block_d >= 8192 else 4)
    return out

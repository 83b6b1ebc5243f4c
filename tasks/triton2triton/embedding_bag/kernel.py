"""embedding_bag: weighted sum of embedding rows for fixed-size bags of ids (EmbeddingBag, mode=sum)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _bag_kernel(idx_ptr, psw_ptr, w_ptr, out_ptr, L, D, BLOCK_D: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    cmask = cols < D
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for j in range(0, L):
        row = tl.load(idx_ptr + b * L + j)
        s = tl.load(psw_ptr + b * L + j)
        acc += tl.load(w_ptr + row * D + cols, mask=cmask, other=0.0).to(tl.float32) * s
    tl.store(out_ptr + b * D + cols, acc.to(out_ptr.dtype.element_ty), mask=cmask)


def embedding_bag(idx, psw, weight):
    """sum_j psw[b, j] * weight[idx[b, j]] for (B, L) int64 ids and float32 weights; (B, D) out."""
    B, L = idx.shape
    D = weight.shape[1]
    out = torch.empty((B, D), dtype=weight.dtype, device=weight.device)
    block_d = 128
    _bag_kernel[(B, triton.cdiv(D, block_d))](idx, psw, weight, out, L, D, BLOCK_D=block_d)
    return out

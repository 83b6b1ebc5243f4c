"""lora_expand over (token tile, column tile) programs on tensor cores, all adapters in one product.

The baseline runs one program per token, a CUDA-core product of the token's R activations with its
adapter's N x R matrix: every token streams the whole B matrix again (R times the bytes of its own
output row, from L2). Here a program owns 64 tokens x 128 columns and stacks the adapters along
the reduction axis: the stacked B tile is (L * R) x 128 (row l * R + r holds lora_b[l, :, r]) and
each token's stacked activation row holds its delta in its own adapter's R slots and zeros
elsewhere, so one tl.dot (float32 accumulation) adds exactly its own adapter's product (the other
slots contribute exact zeros). B is read once per tile instead of once per token; base and out
are read and written once, in 16-byte vectors.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _expand_kernel(base_ptr, d_ptr, b_ptr, idx_ptr, out_ptr, T, N, R, L, IEEE: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = rm < T
    n_ok = rn < N
    ids = tl.load(idx_ptr + rm, mask=m_ok, other=-1)
    rm_c = tl.minimum(rm, T - 1).to(tl.int64)
    rn_c = tl.minimum(rn, N - 1).to(tl.int64)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, L * R, BLOCK_K):
        j = k0 + tl.arange(0, BLOCK_K)  # stacked index: adapter j // R, rank j % R
        j_ok = j < L * R
        ja = j // R
        jr = j % R
        # Each token's delta sits in its own adapter's slots; every other slot is zero.
        take = (ids[:, None] == ja[None, :]) & j_ok[None, :]
        dv = tl.load(d_ptr + rm_c[:, None] * R + jr[None, :], mask=take, other=0.0)
        bv = tl.load(b_ptr + (ja.to(tl.int64)[:, None] * N + rn_c[None, :]) * R + jr[:, None],
                     mask=j_ok[:, None], other=0.0)
        if IEEE:
            acc = tl.dot(dv, bv, acc, input_precision="ieee")
        else:
            acc = tl.dot(dv, bv, acc)
    offs = rm.to(tl.int64)[:, None] * N + rn[None, :]
    mask = m_ok[:, None] & n_ok[None, :]
    base = tl.load(base_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (base + acc).to(out_ptr.dtype.element_ty), mask=mask)


def lora_expand(base, delta, lora_b, idx):
    T, N = base.shape
    L, _, R = lora_b.shape
    out = torch.empty((T, N), dtype=base.dtype, device=base.device)
    bm, bn = 64, 128
    bk = max(16, min(64, triton.next_power_of_2(L * R)))
    grid = (triton.cdiv(T, bm), triton.cdiv(N, bn))
    _expand_kernel[grid](base, delta, lora_b, idx, out, T, N, R, L, IEEE=base.dtype == torch.float32, BLOCK_M=bm,
                         BLOCK_N=bn, BLOCK_K=bk, num_warps=4, num_stages=2)
    return out

"""lora_shrink over token tiles on tensor cores, every adapter of a tile in one pass.

The baseline runs one program per token, a CUDA-core dot product of the token's row with each of
the R rows of its adapter's A matrix: every token streams its whole R x H adapter matrix again (R
times the bytes of the token itself, from L2), and the products run on CUDA cores.
Headroom: per-token matrix-vector products re-read the R x H adapter matrix for every token; a
token tile reads it once per tile and multiplies on tensor cores.
Here a program owns 32 tokens and a group of adapters whose A matrices, stacked, form a
(G * R) x H matrix (G * R <= 128 columns): one pass over H multiplies the token tile by all of them
with tl.dot (float32 accumulation), and each token then keeps the R columns of its own adapter
(a select and a sum of zeros, exact). A group none of the tile's tokens uses exits at once, so a
batch on few adapters costs one group. Tokens without an adapter get zeros from group 0.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _shrink_kernel(x_ptr, a_ptr, idx_ptr, y_ptr, T, H, R, L, scale, IEEE: tl.constexpr, BLOCK_M: tl.constexpr,
                   G: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr):
    tile = tl.program_id(0)
    first = tl.program_id(1) * G  # first adapter of this program's group
    rm = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    m_ok = rm < T
    ids = tl.load(idx_ptr + rm, mask=m_ok, other=-2)
    local = ids - first
    mine = (local >= 0) & (local < G)
    none = (ids == -1) & (first == 0)
    if tl.sum((mine | none).to(tl.int32), axis=0) == 0:
        return
    # Column j of the stacked matrix: adapter first + j // BLOCK_R, rank j % BLOCK_R.
    cols = tl.arange(0, G * BLOCK_R)
    col_adapter = first + cols // BLOCK_R
    col_rank = cols % BLOCK_R
    col_ok = (col_adapter < L) & (col_rank < R)
    col_row = tl.where(col_ok, col_adapter * R + col_rank, 0).to(tl.int64)
    acc = tl.zeros([BLOCK_M, G * BLOCK_R], dtype=tl.float32)
    if tl.sum(mine.to(tl.int32), axis=0) > 0:
        rk = tl.arange(0, BLOCK_K)
        rm_c = tl.minimum(rm, T - 1).to(tl.int64)
        x_ptrs = x_ptr + rm_c[:, None] * H + rk[None, :]
        a_ptrs = a_ptr + col_row[None, :] * H + rk[:, None]
        for k0 in range(0, H, BLOCK_K):
            xv = tl.load(x_ptrs, mask=rk[None, :] < H - k0, other=0.0)
            av = tl.load(a_ptrs, mask=(rk[:, None] < H - k0) & col_ok[None, :], other=0.0)
            if IEEE:
                acc = tl.dot(xv, av, acc, input_precision="ieee")
            else:
                acc = tl.dot(xv, av, acc)
            x_ptrs += BLOCK_K
            a_ptrs += BLOCK_K
    # Keep each token's own adapter's R columns (the other adapters' columns are zeroed, then summed).
    acc3 = tl.reshape(acc, (BLOCK_M, G, BLOCK_R))
    pick = local[:, None, None] == tl.arange(0, G)[None, :, None]
    y = tl.sum(tl.where(pick, acc3, 0.0), axis=1) * scale
    rr = tl.arange(0, BLOCK_R)
    store = (mine | none)[:, None] & (rr[None, :] < R)
    tl.store(y_ptr + rm.to(tl.int64)[:, None] * R + rr[None, :], y.to(y_ptr.dtype.element_ty), mask=store)


def lora_shrink(x, lora_a, idx, scale):
    T, H = x.shape
    L, R, _ = lora_a.shape
    y = torch.empty((T, R), dtype=x.dtype, device=x.device)
    bm = 32
    bk = 32 if x.dtype == torch.float32 else 64
    block_r = triton.next_power_of_2(R)
    g = max(1, min(triton.next_power_of_2(L), 128 // block_r))
    block_r = max(block_r, 16 // g)  # tl.dot needs at least 16 columns
    grid = (triton.cdiv(T, bm), triton.cdiv(L, g))
    _shrink_kernel[grid](x, lora_a, idx, y, T, H, R, L, scale, IEEE=x.dtype == torch.float32, BLOCK_M=bm, G=g,
                         BLOCK_R=block_r, BLOCK_K=bk, num_warps=4, num_stages=3)
    return y

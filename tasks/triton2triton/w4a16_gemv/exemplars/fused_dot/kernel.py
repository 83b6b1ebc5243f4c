"""w4a16_gemv on tensor cores: packed words read once, integer nibbles into tl.dot, scale after.

The baseline runs one program per (row of x, 32 outputs): every packed word is fetched through 8
lanes (one per nibble) and, with M rows, M times; dequantisation and the products run as
elementwise float32 FMAs. Here one program covers all M rows (a 16-row tl.dot tile) for 64
outputs: each step loads the [64, 16] packed words of one 128-wide group once, expands the
nibbles in registers, multiplies the exact small integers (q - 8) on tensor cores and applies the
group's scale to the [M, 64] partial product; layers with few output blocks split K across
programs and a second kernel adds the float32 partials in a fixed order.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _w4_gemv_kernel(x_ptr, qw_ptr, s_ptr, y_ptr, part_ptr, M, N, K, K_PER_SPLIT, GROUP: tl.constexpr,
                    SPLITS: tl.constexpr, IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    rm = tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    nmask = rn < N
    rc = tl.arange(0, GROUP // 8)
    shifts = tl.arange(0, 8) * 4
    K8 = K // 8
    KG = K // GROUP
    k_start = pid_k * K_PER_SPLIT
    k_end = tl.minimum(k_start + K_PER_SPLIT, K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(k_start, k_end, GROUP):
        rk = k0 + tl.arange(0, GROUP)
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
        words = tl.load(qw_ptr + rn.to(tl.int64)[:, None] * K8 + (k0 // 8 + rc)[None, :], mask=nmask[:, None],
                        other=0)
        q = (words[:, :, None] >> shifts[None, None, :]) & 0xF
        q = tl.reshape(q - 8, (BLOCK_N, GROUP)).to(x.dtype)
        s = tl.load(s_ptr + rn.to(tl.int64) * KG + k0 // GROUP, mask=nmask, other=0.0).to(tl.float32)
        if IEEE:
            part = tl.dot(x, tl.trans(q), input_precision="ieee")
        else:
            part = tl.dot(x, tl.trans(q))
        acc += part * s[None, :]
    mask = (rm[:, None] < M) & nmask[None, :]
    if SPLITS == 1:
        tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        tl.store(part_ptr + (pid_k * M + rm[:, None]) * N + rn[None, :], acc, mask=mask)


@triton.jit
def _sum_splits_kernel(part_ptr, y_ptr, MN, SPLITS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < MN
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(SPLITS):
        acc += tl.load(part_ptr + s * MN + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, acc.to(y_ptr.dtype.element_ty), mask=mask)


def w4a16_gemv(x, qweight, scales):
    M, K = x.shape
    N = qweight.shape[0]
    group = 128
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    block_m = max(16, triton.next_power_of_2(M))
    block_n = 64
    n_blocks = triton.cdiv(N, block_n)
    groups = K // group
    splits = max(1, min(triton.cdiv(528, n_blocks), groups // 2))
    k_per_split = triton.cdiv(groups, splits) * group
    splits = triton.cdiv(K, k_per_split)
    part = torch.empty((splits, M, N), dtype=torch.float32, device=x.device) if splits > 1 else y
    _w4_gemv_kernel[(n_blocks, splits)](x, qweight, scales, y, part, M, N, K, k_per_split, GROUP=group,
                                        SPLITS=splits, IEEE=x.dtype == torch.float32, BLOCK_M=block_m,
                                        BLOCK_N=block_n, num_warps=4, num_stages=3)
    if splits > 1:
        block = 1024
        _sum_splits_kernel[(triton.cdiv(M * N, block),)](part, y, M * N, SPLITS=splits, BLOCK=block)
    return y

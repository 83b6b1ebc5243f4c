"""w4a16_gemv with integer-to-float conversion by exponent bits, and split-K for narrow layers.

The baseline turns every nibble into a float with a conversion instruction ((q - 8).to(dtype):
one I2F per weight, a quarter-rate instruction), and its unpacked [64, 128] weight tile reaches
shared memory (for tl.dot) one 2-byte store per weight: at about 11 instructions per weight a
decode-time layer is bound by instruction issue, not by reading its 4-bit weights. Here a nibble
q becomes a float with integer ops only: OR-ed under the exponent bits of 1024 (float16), 128
(bfloat16) or 2**23 (float32) and reinterpreted, it reads exactly 1024 + q (resp. 128 + q,
2**23 + q), and one subtraction leaves q - 8, exactly (the compiler does two per instruction).
The 8 nibbles of a word are joined inside one thread, so the tile is stored 16 bytes at a time,
and the weight tile is the left tl.dot operand. Layers with few output blocks (a down
projection, N = 8192: 128 programs) also split K across programs until there are about 528, and
a second kernel adds the float32 partial sums in a fixed order.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _dequant(q, DT: tl.constexpr):
    # q - 8 for integers 0 <= q < 16, in dtype DT, with no int-to-float conversion instruction.
    if DT == tl.float16:
        return (q | 0x6400).to(tl.int16).to(tl.float16, bitcast=True) - 1032.0  # 0x6400 = 1024.0
    elif DT == tl.bfloat16:
        w = (q | 0x4300).to(tl.int16).to(tl.bfloat16, bitcast=True)  # 0x4300 = 128.0
        return (w.to(tl.float32) - 136.0).to(tl.bfloat16)
    else:
        return (q | 0x4B000000).to(tl.float32, bitcast=True) - 8388616.0  # 0x4B000000 = 2.0 ** 23


@triton.jit
def _unpack8(words, DT: tl.constexpr):
    # [R, C] int32 words -> [R, C, 2, 2, 2] values, nibble j of word c at flat position 8 * c + j. Each
    # nibble is dequantised on its own and the 8 are joined inside one thread (joins add an in-thread
    # axis), so the tile reaches shared memory as 16-byte runs.
    n0 = _dequant(words & 0xF, DT)
    n1 = _dequant((words >> 4) & 0xF, DT)
    n2 = _dequant((words >> 8) & 0xF, DT)
    n3 = _dequant((words >> 12) & 0xF, DT)
    n4 = _dequant((words >> 16) & 0xF, DT)
    n5 = _dequant((words >> 20) & 0xF, DT)
    n6 = _dequant((words >> 24) & 0xF, DT)
    n7 = _dequant((words >> 28) & 0xF, DT)
    return tl.join(tl.join(tl.join(n0, n4), tl.join(n2, n6)), tl.join(tl.join(n1, n5), tl.join(n3, n7)))


@triton.jit
def _w4_gemv_kernel(x_ptr, qw_ptr, s_ptr, y_ptr, part_ptr, M, N, K, K_PER_SPLIT, GROUP: tl.constexpr,
                    SPLITS: tl.constexpr, IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    rm = tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    nmask = rn < N
    rc = tl.arange(0, GROUP // 8)
    K8 = K // 8
    KG = K // GROUP
    k_start = pid_k * K_PER_SPLIT
    k_end = tl.minimum(k_start + K_PER_SPLIT, K)
    acc = tl.zeros([BLOCK_N, BLOCK_M], dtype=tl.float32)
    for k0 in range(k_start, k_end, GROUP):
        rk = k0 + tl.arange(0, GROUP)
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
        words = tl.load(qw_ptr + rn.to(tl.int64)[:, None] * K8 + (k0 // 8 + rc)[None, :], mask=nmask[:, None],
                        other=0)
        w = tl.reshape(_unpack8(words, x.dtype), (BLOCK_N, GROUP))
        s = tl.load(s_ptr + rn.to(tl.int64) * KG + k0 // GROUP, mask=nmask, other=0.0).to(tl.float32)
        # The weight tile is the left operand ([BLOCK_N, GROUP], k contiguous as unpacked), x the right one.
        if IEEE:
            part = tl.dot(w, tl.trans(x), input_precision="ieee")
        else:
            part = tl.dot(w, tl.trans(x))
        acc += part * s[:, None]
    mask = nmask[:, None] & (rm[None, :] < M)
    if SPLITS == 1:
        tl.store(y_ptr + rm[None, :] * N + rn[:, None], acc.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        tl.store(part_ptr + (pid_k * M + rm[None, :]) * N + rn[:, None], acc, mask=mask)


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

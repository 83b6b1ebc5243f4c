"""Stable sort of (key, value) pairs in one pass per 8 bits of key: a counting sort by blocks.

The baseline splits on one bit per pass: a 7-bit expert id costs 7 passes of three launches
(count, a one-program scan, split), each reading and writing every key and value. Here a pass
sorts on up to 8 bits at once (one pass for up to 256 experts), in three kernels over blocks of
1024 keys: the block's digit histogram (also added into the digit totals), then one program per
digit scans that digit's counts across blocks into output bases (all digits in parallel, no
serial scan), then each block sorts its (digit, position) pairs in registers (a bitonic sort of
1024 packed integers, the same cost for 8 experts or 256) and writes every pair at its digit's
base plus its rank among the block's equal digits, which keeps the sort stable. Runs of equal
digits are contiguous in the block's sorted order, so the writes are coalesced.
"""

import torch
import triton
import triton.language as tl

MAX_DIGIT_BITS = 8
BLOCK = 1024


@triton.jit
def _digit_count_kernel(keys_ptr, table_ptr, totals_ptr, n, shift, num_blocks, BLOCK: tl.constexpr,
                        RADIX: tl.constexpr):
    # table[d * num_blocks + b] = how many keys of block b have digit d; totals[d] += the same.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    digits = (tl.load(keys_ptr + offs, mask=mask, other=0) >> shift) & (RADIX - 1)
    counts = tl.histogram(digits, RADIX, mask=mask)
    radix = tl.arange(0, RADIX)
    tl.store(table_ptr + radix * num_blocks + pid, counts)
    tl.atomic_add(totals_ptr + radix, counts, mask=counts > 0)


@triton.jit
def _digit_base_kernel(table_ptr, totals_ptr, num_blocks, RADIX: tl.constexpr, CHUNK: tl.constexpr):
    # Program d: table[d, b] becomes the output position of block b's first key with digit d.
    d = tl.program_id(0)
    radix = tl.arange(0, RADIX)
    carry = tl.sum(tl.where(radix < d, tl.load(totals_ptr + radix), 0), axis=0)
    row = table_ptr + d * num_blocks
    for start in range(0, num_blocks, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        mask = offs < num_blocks
        counts = tl.load(row + offs, mask=mask, other=0)
        tl.store(row + offs, tl.cumsum(counts, axis=0) - counts + carry, mask=mask)
        carry += tl.sum(counts, axis=0)


@triton.jit
def _run_length(digit_a, count_a, digit_b, count_b):
    # Inclusive count of the run of equal digits ending at b (digits are sorted).
    return digit_b, tl.where(digit_a == digit_b, count_a + count_b, count_b)


@triton.jit
def _digit_scatter_kernel(keys_in, vals_in, keys_out, vals_out, base_ptr, n, shift, num_blocks,
                          BLOCK: tl.constexpr, LOG_BLOCK: tl.constexpr, RADIX: tl.constexpr,
                          KEY_IS_DIGIT: tl.constexpr):
    pid = tl.program_id(0)
    local = tl.arange(0, BLOCK)
    offs = pid * BLOCK + local
    mask = offs < n
    digits = (tl.load(keys_in + offs, mask=mask, other=0) >> shift) & (RADIX - 1)
    digits = tl.where(mask, digits, RADIX)  # past the end: sorts after every real digit
    # Distinct packed values, so the block's order is (digit, position): stable.
    packed = tl.sort((digits << LOG_BLOCK) | local)
    digit = packed >> LOG_BLOCK
    src = pid * BLOCK + (packed & (BLOCK - 1))
    _, run = tl.associative_scan((digit, tl.full([BLOCK], 1, tl.int32)), 0, _run_length)
    valid = digit < RADIX
    dest = tl.load(base_ptr + digit * num_blocks + pid, mask=valid, other=0) + run - 1
    if KEY_IS_DIGIT:
        keys = digit
    else:
        keys = tl.load(keys_in + src, mask=valid, other=0)
    tl.store(keys_out + dest, keys, mask=valid)
    tl.store(vals_out + dest, tl.load(vals_in + src, mask=valid, other=0), mask=valid)


def sort_pairs(keys: torch.Tensor, values: torch.Tensor, num_bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    n = keys.numel()
    if n == 0:
        return keys.clone(), values.clone()
    num_bits = max(1, num_bits)
    num_blocks = triton.cdiv(n, BLOCK)
    chunk = min(4096, triton.next_power_of_2(num_blocks))
    table = torch.empty(num_blocks << min(num_bits, MAX_DIGIT_BITS), dtype=torch.int32, device=keys.device)
    # The inputs are only read: the first pass reads them, later passes alternate two buffers.
    buffers = [(torch.empty_like(keys), torch.empty_like(values)) for _ in range(2)]
    src_k, src_v = keys, values
    for step, shift in enumerate(range(0, num_bits, MAX_DIGIT_BITS)):
        bits = min(MAX_DIGIT_BITS, num_bits - shift)
        radix = 1 << bits
        dst_k, dst_v = buffers[step % 2]
        totals = torch.zeros(radix, dtype=torch.int32, device=keys.device)
        _digit_count_kernel[(num_blocks,)](src_k, table, totals, n, shift, num_blocks, BLOCK=BLOCK, RADIX=radix,
                                           num_warps=4)
        _digit_base_kernel[(radix,)](table, totals, num_blocks, RADIX=radix, CHUNK=chunk, num_warps=4)
        _digit_scatter_kernel[(num_blocks,)](src_k, src_v, dst_k, dst_v, table, n, shift, num_blocks,
                                             BLOCK=BLOCK, LOG_BLOCK=BLOCK.bit_length() - 1, RADIX=radix,
                                             KEY_IS_DIGIT=shift == 0 and bits == num_bits, num_warps=4)
        src_k, src_v = dst_k, dst_v
    return src_k, src_v

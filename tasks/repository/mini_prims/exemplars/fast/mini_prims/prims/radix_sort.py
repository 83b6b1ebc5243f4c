"""Radix sort with 4-bit digits: one pass per digit instead of one per bit, two launches a pass.

The baseline splits on one bit per pass, so a 7-bit expert id costs 7 passes of three launches,
each reading and writing every key and value. Here each pass handles a 4-bit digit (2 passes for
up to 256 experts, 1 for up to 16): a first kernel counts the 16 digits per block into a
digit-major table; the scatter kernel reads the whole table (16 counts a block: 64 KB for a
million keys) and computes its own output base for each digit (the counts of smaller digits in
every block plus those of its digit in earlier blocks), so no scan kernel runs between the two,
and ranks each key among the equal digits before it in its block with a cumulative sum over a
(BLOCK, 16) one-hot tile, which keeps the sort stable. Few launches a call matter: the caller's
calls are queued many at a time, and a stream's queue of pending launches is finite.
"""

import torch
import triton
import triton.language as tl

DIGIT_BITS = 4


@triton.jit
def _digit_count_kernel(keys_ptr, table_ptr, n, shift, num_blocks, BLOCK: tl.constexpr, RADIX: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    digits = (tl.load(keys_ptr + offs, mask=mask, other=0) >> shift) & (RADIX - 1)
    counts = tl.histogram(digits, RADIX, mask=mask)
    tl.store(table_ptr + tl.arange(0, RADIX) * num_blocks + pid, counts)


@triton.jit
def _digit_scatter_kernel(keys_in, vals_in, keys_out, vals_out, table_ptr, n, shift, num_blocks,
                          BLOCK: tl.constexpr, RADIX: tl.constexpr, COLS: tl.constexpr):
    pid = tl.program_id(0)
    radix = tl.arange(0, RADIX)
    # Per digit: its count over all blocks, and over the blocks before this one.
    total = tl.zeros([RADIX], dtype=tl.int32)
    prior = tl.zeros([RADIX], dtype=tl.int32)
    for start in range(0, num_blocks, COLS):
        cols = start + tl.arange(0, COLS)
        tile = tl.load(table_ptr + radix[:, None] * num_blocks + cols[None, :], mask=cols[None, :] < num_blocks,
                       other=0)
        total += tl.sum(tile, axis=1)
        prior += tl.sum(tl.where(cols[None, :] < pid, tile, 0), axis=1)
    base = tl.cumsum(total, axis=0) - total + prior

    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    keys = tl.load(keys_in + offs, mask=mask, other=0)
    vals = tl.load(vals_in + offs, mask=mask, other=0)
    digits = (keys >> shift) & (RADIX - 1)
    onehot = ((digits[:, None] == radix[None, :]) & mask[:, None]).to(tl.int32)
    before = tl.cumsum(onehot, axis=0) - onehot
    dest = tl.sum(onehot * (before + base[None, :]), axis=1)
    tl.store(keys_out + dest, keys, mask=mask)
    tl.store(vals_out + dest, vals, mask=mask)


def sort_pairs(keys: torch.Tensor, values: torch.Tensor, num_bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    n = keys.numel()
    block = 1024
    num_blocks = triton.cdiv(n, block)
    radix = 1 << DIGIT_BITS
    cols = min(1024, triton.next_power_of_2(num_blocks))
    # The inputs are only read: the first pass reads them, later passes alternate two buffers.
    buffers = [(torch.empty_like(keys), torch.empty_like(values)) for _ in range(2)]
    src_k, src_v = keys, values
    table = torch.empty(radix * num_blocks, dtype=torch.int32, device=keys.device)
    for step, shift in enumerate(range(0, num_bits, DIGIT_BITS)):
        dst_k, dst_v = buffers[step % 2]
        _digit_count_kernel[(num_blocks,)](src_k, table, n, shift, num_blocks, BLOCK=block, RADIX=radix,
                                           num_warps=4)
        _digit_scatter_kernel[(num_blocks,)](src_k, src_v, dst_k, dst_v, table, n, shift, num_blocks,
                                             BLOCK=block, RADIX=radix, COLS=cols, num_warps=8)
        src_k, src_v = dst_k, dst_v
    return src_k, src_v

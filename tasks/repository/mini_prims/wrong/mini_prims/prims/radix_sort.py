"""Radix sort with 4-bit digits whose pass count rounds the key width down to whole digits."""

import torch
import triton
import triton.language as tl
from mini_prims.prims.scan import exclusive_scan

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
def _digit_scatter_kernel(keys_in, vals_in, keys_out, vals_out, bases_ptr, n, shift, num_blocks,
                          BLOCK: tl.constexpr, RADIX: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    keys = tl.load(keys_in + offs, mask=mask, other=0)
    vals = tl.load(vals_in + offs, mask=mask, other=0)
    digits = (keys >> shift) & (RADIX - 1)
    onehot = ((digits[:, None] == tl.arange(0, RADIX)[None, :]) & mask[:, None]).to(tl.int32)
    before = tl.cumsum(onehot, axis=0) - onehot
    rank = tl.sum(before * onehot, axis=1)
    base = tl.load(bases_ptr + digits * num_blocks + pid, mask=mask, other=0)
    dest = base + rank
    tl.store(keys_out + dest, keys, mask=mask)
    tl.store(vals_out + dest, vals, mask=mask)


def sort_pairs(keys: torch.Tensor, values: torch.Tensor, num_bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    n = keys.numel()
    block = 1024
    num_blocks = triton.cdiv(n, block)
    radix = 1 << DIGIT_BITS
    # The inputs are only read: the first pass reads them, later passes alternate two buffers.
    buffers = [(torch.empty_like(keys), torch.empty_like(values)) for _ in range(2)]
    src_k, src_v = keys, values
    table = torch.empty(radix * num_blocks, dtype=torch.int32, device=keys.device)
    for step in range(num_bits // DIGIT_BITS):
        shift = step * DIGIT_BITS
        dst_k, dst_v = buffers[step % 2]
        _digit_count_kernel[(num_blocks,)](src_k, table, n, shift, num_blocks, BLOCK=block, RADIX=radix,
                                           num_warps=4)
        bases = exclusive_scan(table)
        _digit_scatter_kernel[(num_blocks,)](src_k, src_v, dst_k, dst_v, bases, n, shift, num_blocks,
                                             BLOCK=block, RADIX=radix, num_warps=8)
        src_k, src_v = dst_k, dst_v
    return src_k, src_v

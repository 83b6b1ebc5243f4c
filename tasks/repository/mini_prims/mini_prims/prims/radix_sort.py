"""Stable LSD radix sort of (key, value) pairs with non-negative int32 keys."""

import torch
import triton
import triton.language as tl

from mini_prims.prims.scan import exclusive_scan


@triton.jit
def _count_zeros_kernel(keys_ptr, block_zeros_ptr, n, bit, BLOCK: tl.constexpr):
    # block_zeros[b] = how many keys of block b have a 0 at `bit`.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    keys = tl.load(keys_ptr + offs, mask=mask, other=0)
    is_zero = (((keys >> bit) & 1) == 0) & mask
    tl.store(block_zeros_ptr + tl.program_id(0), tl.sum(is_zero.to(tl.int32), axis=0))


@triton.jit
def _split_kernel(keys_in, vals_in, keys_out, vals_out, zero_offsets_ptr, n, bit, num_blocks,
                  BLOCK: tl.constexpr):
    # Keys with a 0 at `bit` go first, the rest after them, each group in its input order.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    keys = tl.load(keys_in + offs, mask=mask, other=0)
    vals = tl.load(vals_in + offs, mask=mask, other=0)
    is_zero = ((((keys >> bit) & 1) == 0) & mask).to(tl.int32)
    is_one = (((keys >> bit) & 1) == 1).to(tl.int32) * mask.to(tl.int32)
    rank_zero = tl.cumsum(is_zero, axis=0) - is_zero
    rank_one = tl.cumsum(is_one, axis=0) - is_one
    zeros_before = tl.load(zero_offsets_ptr + pid)
    zeros_total = tl.load(zero_offsets_ptr + num_blocks)
    ones_before = pid * BLOCK - zeros_before
    dest = tl.where(is_zero == 1, zeros_before + rank_zero, zeros_total + ones_before + rank_one)
    tl.store(keys_out + dest, keys, mask=mask)
    tl.store(vals_out + dest, vals, mask=mask)


def sort_pairs(keys: torch.Tensor, values: torch.Tensor, num_bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sort 1-D int32 keys (all < 2**num_bits) with their int32 values, stably: equal keys keep
    their input order. Returns (sorted keys, values in the same order); the inputs are unchanged."""
    n = keys.numel()
    block = 1024
    num_blocks = triton.cdiv(n, block)
    src_k, src_v = keys.clone(), values.clone()
    dst_k, dst_v = torch.empty_like(keys), torch.empty_like(values)
    block_zeros = torch.empty(num_blocks, dtype=torch.int32, device=keys.device)
    for bit in range(num_bits):
        _count_zeros_kernel[(num_blocks,)](src_k, block_zeros, n, bit, BLOCK=block)
        zero_offsets = exclusive_scan(block_zeros)
        _split_kernel[(num_blocks,)](src_k, src_v, dst_k, dst_v, zero_offsets, n, bit, num_blocks, BLOCK=block)
        src_k, dst_k = dst_k, src_k
        src_v, dst_v = dst_v, src_v
    return src_k, src_v

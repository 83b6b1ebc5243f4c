"""moe_align_block_size with many slices, rounding each expert's run up by always adding one
block ((count // BM + 1) * BM: a whole empty block for counts that are multiples of BM, zero included)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _count_kernel(ids_ptr, counts_ptr, n, E, SLICE, EP: tl.constexpr, CHUNK: tl.constexpr):
    s = tl.program_id(0)
    start = s * SLICE
    end = tl.minimum(start + SLICE, n)
    hist = tl.zeros([EP], dtype=tl.int32)
    for c in range(start, end, CHUNK):
        i = c + tl.arange(0, CHUNK)
        valid = i < end
        e = tl.load(ids_ptr + i, mask=valid, other=0)
        hist += tl.histogram(e, EP, mask=valid)
    cols = tl.arange(0, EP)
    tl.store(counts_ptr + s * E + cols, hist, mask=cols < E)


@triton.jit
def _offsets_kernel(counts_ptr, base_ptr, off_ptr, tot_ptr, expert_ids_ptr, num_post_ptr, S, E, NBLK, BM,
                    SP: tl.constexpr, EP: tl.constexpr, BB: tl.constexpr):
    rs = tl.arange(0, SP)
    re = tl.arange(0, EP)
    mask = (rs[:, None] < S) & (re[None, :] < E)
    counts = tl.load(counts_ptr + rs[:, None] * E + re[None, :], mask=mask, other=0)
    tot = tl.sum(counts, axis=0)
    padded = (tot // BM + 1) * BM
    off = tl.cumsum(padded, axis=0) - padded
    base = off[None, :] + tl.cumsum(counts, axis=0) - counts
    tl.store(base_ptr + rs[:, None] * E + re[None, :], base, mask=mask)
    tl.store(off_ptr + re, off, mask=re < E)
    tl.store(tot_ptr + re, tot, mask=re < E)
    tl.store(num_post_ptr, tl.sum(padded, axis=0))
    for b0 in range(0, NBLK, BB):
        rb = b0 + tl.arange(0, BB)
        p = rb[:, None] * BM
        inside = (p >= off[None, :]) & (p < (off + padded)[None, :]) & (re[None, :] < E)
        tl.store(expert_ids_ptr + rb, tl.max(tl.where(inside, re[None, :], -1), axis=1), mask=rb < NBLK)


@triton.jit
def _fill_kernel(sorted_ptr, expert_ids_ptr, off_ptr, tot_ptr, n, P, BM, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inb = p < P
    e = tl.load(expert_ids_ptr + p // BM, mask=inb, other=-1)
    used = e >= 0
    within = p - tl.load(off_ptr + e, mask=inb & used, other=0)
    pad = ~used | (within >= tl.load(tot_ptr + e, mask=inb & used, other=0))
    tl.store(sorted_ptr + p, tl.zeros([BLOCK], dtype=tl.int32) + n, mask=inb & pad)


@triton.jit
def _scatter_kernel(ids_ptr, base_ptr, sorted_ptr, n, E, SLICE, EP: tl.constexpr, CHUNK: tl.constexpr):
    s = tl.program_id(0)
    start = s * SLICE
    end = tl.minimum(start + SLICE, n)
    re = tl.arange(0, EP)
    cnt = tl.load(base_ptr + s * E + re, mask=re < E, other=0)
    for c in range(start, end, CHUNK):
        i = c + tl.arange(0, CHUNK)
        valid = i < end
        e = tl.load(ids_ptr + i, mask=valid, other=EP)
        onehot = (e[:, None] == re[None, :]).to(tl.int32)
        before = tl.cumsum(onehot, axis=0) - onehot
        pos = tl.sum(onehot * (cnt[None, :] + before), axis=1)
        tl.store(sorted_ptr + pos, i, mask=valid)
        cnt += tl.sum(onehot, axis=0)


def _align(topk_ids, E, BM, slices, chunk):
    n = topk_ids.numel()
    nblk = triton.cdiv(n, BM) + E
    dev = topk_ids.device
    ep = triton.next_power_of_2(E)
    slice_len = triton.cdiv(triton.cdiv(n, slices), chunk) * chunk
    slices = triton.cdiv(n, slice_len)
    counts = torch.empty((slices, E), dtype=torch.int32, device=dev)
    base = torch.empty((slices, E), dtype=torch.int32, device=dev)
    off = torch.empty(E, dtype=torch.int32, device=dev)
    tot = torch.empty(E, dtype=torch.int32, device=dev)
    sorted_ids = torch.empty(nblk * BM, dtype=torch.int32, device=dev)
    expert_ids = torch.empty(nblk, dtype=torch.int32, device=dev)
    num_post = torch.empty(1, dtype=torch.int32, device=dev)
    _count_kernel[(slices,)](topk_ids, counts, n, E, slice_len, EP=ep, CHUNK=chunk)
    _offsets_kernel[(1,)](counts, base, off, tot, expert_ids, num_post, slices, E, nblk, BM,
                          SP=triton.next_power_of_2(slices), EP=ep, BB=max(16, 4096 // ep), num_warps=8)
    block = 1024
    _fill_kernel[(triton.cdiv(nblk * BM, block),)](sorted_ids, expert_ids, off, tot, n, nblk * BM, BM, BLOCK=block)
    _scatter_kernel[(slices,)](topk_ids, base, sorted_ids, n, E, slice_len, EP=ep, CHUNK=chunk, num_warps=8)
    return sorted_ids, expert_ids, num_post


def moe_align_block_size(topk_ids, E, BM):
    ep = triton.next_power_of_2(E)
    chunk = max(32, min(256, 8192 // ep))
    # One chunk per slice, as many slices as the offsets kernel's [slices, experts] tile allows.
    slices = max(1, min(triton.cdiv(topk_ids.numel(), chunk), 32768 // ep))
    return _align(topk_ids, E, BM, slices=slices, chunk=chunk)

"""moe_align_block_size in four short, fully parallel launches.

The baseline's single offsets program also fills expert_ids, one tile of blocks after another:
for 2176 blocks and 128 experts that is 68 dependent steps of one program while the rest of the
GPU waits, and its scatter kernel runs one program per expert, each ranking a long slice chunk
after chunk through one-hot prefix sums. Here: (1) every 64-entry chunk is its own program and
writes its expert histogram, expert-major; (2) one program per expert scans its row of chunk
counts into exclusive prefixes and a total; (3) one small program turns the totals into padded
offsets; (4) one launch places everything: each chunk's program ranks its entries with a 64 x 64
comparison (a reduction, no scan) and writes entry i at off[e] + prefix[e, chunk] + rank, and the
remaining programs each take a group of blocks: their expert_ids and the padding value n in every
position no entry takes.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _count_kernel(ids_ptr, counts_ptr, n, S, CHUNK: tl.constexpr, EP: tl.constexpr):
    s = tl.program_id(0)
    i = s * CHUNK + tl.arange(0, CHUNK)
    valid = i < n
    e = tl.load(ids_ptr + i, mask=valid, other=0)
    hist = tl.histogram(e, EP, mask=valid)
    tl.store(counts_ptr + tl.arange(0, EP) * S + s, hist)  # expert-major: counts[e, s]


@triton.jit
def _scan_kernel(counts_ptr, prefix_ptr, tot_ptr, S, SP: tl.constexpr):
    e = tl.program_id(0)
    rs = tl.arange(0, SP)
    c = tl.load(counts_ptr + e * S + rs, mask=rs < S, other=0)
    tl.store(prefix_ptr + e * S + rs, tl.cumsum(c, axis=0) - c, mask=rs < S)
    tl.store(tot_ptr + e, tl.sum(c, axis=0))


@triton.jit
def _offsets_kernel(tot_ptr, off_ptr, num_post_ptr, BM, EP: tl.constexpr):
    re = tl.arange(0, EP)
    padded = (tl.load(tot_ptr + re) + BM - 1) // BM * BM
    tl.store(off_ptr + re, tl.cumsum(padded, axis=0) - padded)
    tl.store(num_post_ptr, tl.sum(padded, axis=0))


@triton.jit
def _place_kernel(ids_ptr, prefix_ptr, tot_ptr, off_ptr, sorted_ptr, expert_ids_ptr, n, S, NBLK,
                  BM: tl.constexpr, BMP: tl.constexpr, CHUNK: tl.constexpr, EP: tl.constexpr, BB: tl.constexpr):
    pid = tl.program_id(0)
    if pid < S:
        # Entry i of chunk pid goes to off[e] + (entries of e in earlier chunks) + (earlier ones in this chunk).
        r = tl.arange(0, CHUNK)
        i = pid * CHUNK + r
        valid = i < n
        e = tl.load(ids_ptr + i, mask=valid, other=0)
        same = (e[:, None] == e[None, :]) & (r[None, :] < r[:, None])
        rank = tl.sum(same.to(tl.int32), axis=1)
        first = tl.load(off_ptr + e, mask=valid, other=0)
        earlier = tl.load(prefix_ptr + e * S + pid, mask=valid, other=0)
        tl.store(sorted_ptr + first + earlier + rank, i, mask=valid)
    else:
        # Blocks [f * BB, f * BB + BB): their expert, and n in every position no entry takes.
        re = tl.arange(0, EP)
        off = tl.load(off_ptr + re)
        tot = tl.load(tot_ptr + re)
        end = off + (tot + BM - 1) // BM * BM
        rb = (pid - S) * BB + tl.arange(0, BB)
        start = rb * BM
        inside = (start[:, None] >= off[None, :]) & (start[:, None] < end[None, :])
        expert = tl.max(tl.where(inside, re[None, :], -1), axis=1)
        used = tl.max(tl.where(inside, (off + tot)[None, :], 0), axis=1)  # first position past its entries
        bmask = rb < NBLK
        tl.store(expert_ids_ptr + rb, expert, mask=bmask)
        rm = tl.arange(0, BMP)
        p = start[:, None] + rm[None, :]
        pad = (expert[:, None] < 0) | (p >= used[:, None])
        tl.store(sorted_ptr + p, tl.zeros([BB, BMP], dtype=tl.int32) + n,
                 mask=bmask[:, None] & (rm[None, :] < BM) & pad)


def moe_align_block_size(topk_ids, E, BM):
    n = topk_ids.numel()
    nblk = triton.cdiv(n, BM) + E
    dev = topk_ids.device
    ep = triton.next_power_of_2(E)
    chunk = 64
    chunks = triton.cdiv(n, chunk)
    counts = torch.empty((ep, chunks), dtype=torch.int32, device=dev)
    prefix = torch.empty((ep, chunks), dtype=torch.int32, device=dev)
    tot = torch.empty(ep, dtype=torch.int32, device=dev)
    off = torch.empty(ep, dtype=torch.int32, device=dev)
    sorted_ids = torch.empty(nblk * BM, dtype=torch.int32, device=dev)
    expert_ids = torch.empty(nblk, dtype=torch.int32, device=dev)
    num_post = torch.empty(1, dtype=torch.int32, device=dev)
    _count_kernel[(chunks,)](topk_ids, counts, n, chunks, CHUNK=chunk, EP=ep, num_warps=2)
    _scan_kernel[(ep,)](counts, prefix, tot, chunks, SP=triton.next_power_of_2(chunks), num_warps=4)
    _offsets_kernel[(1,)](tot, off, num_post, BM, EP=ep, num_warps=4)
    bmp = triton.next_power_of_2(BM)
    bb = max(1, 2048 // bmp)  # blocks per fill program: 2048 positions
    fills = triton.cdiv(nblk, bb)
    _place_kernel[(chunks + fills,)](topk_ids, prefix, tot, off, sorted_ids, expert_ids, n, chunks, nblk,
                                     BM=BM, BMP=bmp, CHUNK=chunk, EP=ep, BB=bb, num_warps=4)
    return sorted_ids, expert_ids, num_post

"""Reference for moe_align_block_size: a stable counting sort of the routed (token, slot) entries by
expert, each expert's run padded to a multiple of the block size."""

import torch


def moe_align_block_size(topk_ids, E, BM):
    flat = topk_ids.flatten().long()
    n = flat.numel()
    nblk = (n + BM - 1) // BM + E
    counts = torch.bincount(flat, minlength=E)
    padded = (counts + BM - 1) // BM * BM
    offsets = torch.cumsum(padded, 0) - padded
    order = torch.argsort(flat, stable=True)
    expert_of = flat[order]
    rank = torch.arange(n, device=flat.device) - (torch.cumsum(counts, 0) - counts)[expert_of]
    sorted_ids = torch.full((nblk * BM,), n, dtype=torch.int32, device=flat.device)
    sorted_ids[offsets[expert_of] + rank] = order.to(torch.int32)
    expert_ids = torch.full((nblk,), -1, dtype=torch.int32, device=flat.device)
    for e in range(E):
        expert_ids[int(offsets[e]) // BM:int(offsets[e] + padded[e]) // BM] = e
    num_post = padded.sum().reshape(1).to(torch.int32)
    return sorted_ids, expert_ids, num_post

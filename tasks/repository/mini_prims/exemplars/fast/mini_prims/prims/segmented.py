"""Segmented sum with every segment split across programs.

The baseline runs one program per segment: with 8 experts and half a million entries, 8 programs
each walk 64k elements one block at a time while the rest of the GPU idles. Here a (segment,
chunk) grid sums chunks of 4096 elements in parallel into a partials table (an empty chunk
writes 0), and a second kernel adds each segment's partials in chunk order.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _chunk_sum_kernel(x_ptr, offsets_ptr, partial_ptr, num_chunks, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    seg = tl.program_id(0)
    chunk = tl.program_id(1)
    start = tl.load(offsets_ptr + seg) + chunk * CHUNK
    end = tl.minimum(tl.load(offsets_ptr + seg + 1), start + CHUNK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for base in range(start, end, BLOCK):
        offs = base + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < end, other=0.0)
    tl.store(partial_ptr + seg * num_chunks + chunk, tl.sum(acc, axis=0))


@triton.jit
def _partials_sum_kernel(partial_ptr, out_ptr, num_chunks, CPAD: tl.constexpr):
    seg = tl.program_id(0)
    offs = tl.arange(0, CPAD)
    p = tl.load(partial_ptr + seg * num_chunks + offs, mask=offs < num_chunks, other=0.0)
    tl.store(out_ptr + seg, tl.sum(p, axis=0))


def segmented_sum(x: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    num_segments = offsets.numel() - 1
    out = torch.empty(num_segments, dtype=torch.float32, device=x.device)
    chunk = 4096
    # Any one segment may hold the whole vector, so every segment gets enough chunks for it.
    num_chunks = max(1, triton.cdiv(x.numel(), chunk))
    partial = torch.empty((num_segments, num_chunks), dtype=torch.float32, device=x.device)
    _chunk_sum_kernel[(num_segments, num_chunks)](x, offsets, partial, num_chunks, CHUNK=chunk, BLOCK=1024,
                                                  num_warps=4)
    _partials_sum_kernel[(num_segments,)](partial, out, num_chunks, CPAD=triton.next_power_of_2(num_chunks),
                                          num_warps=4)
    return out

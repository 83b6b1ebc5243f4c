"""mini_sparse_attn's own benchmark: times sparse_attention_block on a CUDA or ROCm GPU and prints
one line per shape.

Usage: python bench.py [--dtype bfloat16] [--shape B,H,S,D,E ...] [--block 64] [--random 3] [--reps 30]
Each call is timed alone with device events after a cache flush; the median is printed.
"""

import argparse
import statistics

import torch
from mini_sparse_attn.attention_block import sparse_attention_block

DEFAULT_SHAPES = ["1,16,8192,64,1024", "2,12,4096,64,768"]


def make_inputs(batch, heads, seq, dim, embed, block, random, dtype, device):
    gen = torch.Generator(device=device).manual_seed(0)

    def normal(*shape, std=1.0):
        return (torch.randn(*shape, generator=gen, device=device) * std).to(dtype)

    num_blocks = -(-seq // block)
    rand_blocks = torch.randint(0, num_blocks, (heads, num_blocks, random), generator=gen, device=device)
    return (
        normal(batch, heads, seq, dim, std=1.5),
        normal(batch, heads, seq, dim),
        normal(batch, heads, seq, dim),
        rand_blocks.to(torch.int32),
        normal(heads, dim, embed, std=0.1),
    )


def time_call(fn, reps, device):
    # Twice the last-level cache is enough to evict it on every GPU we run on (MI300X: 256 MB).
    flush = torch.empty(512 * 1024 * 1024, dtype=torch.uint8, device=device)
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="bfloat16", choices=["float16", "bfloat16", "float32"])
    parser.add_argument("--shape", action="append", help="B,H,S,D,E (repeatable)")
    parser.add_argument("--block", type=int, default=64)
    parser.add_argument("--random", type=int, default=3)
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    device = "cuda"
    dtype = getattr(torch, args.dtype)
    for shape in args.shape or DEFAULT_SHAPES:
        batch, heads, seq, dim, embed = (int(v) for v in shape.split(","))
        inputs = make_inputs(batch, heads, seq, dim, embed, args.block, args.random, dtype, device)
        us = time_call(
            lambda inputs=inputs: sparse_attention_block(*inputs, block_size=args.block, window=1, num_global=1),
            args.reps,
            device,
        )
        print(
            f"sparse_attention_block B={batch} H={heads} S={seq} D={dim} E={embed} block={args.block} "
            f"R={args.random} {args.dtype}: {us:.1f} us"
        )


if __name__ == "__main__":
    main()

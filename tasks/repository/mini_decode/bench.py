"""mini_decode's own benchmark: times decode_step on a CUDA or ROCm GPU and prints one line per shape.

Usage: python bench.py [--dtype bfloat16] [--shape B,H,HQ,HKV,D,CTX ...] [--reps 50]
Every sequence's position is drawn in [CTX / 2, CTX). Each call is timed alone with device events
after a cache flush; the median is printed.
"""

import argparse
import statistics

import torch
from mini_decode.engine import decode_step

DEFAULT_SHAPES = ["4,4096,32,8,128,16384", "16,4096,32,8,128,4096", "64,3584,28,4,128,2048"]


def make_inputs(batch, hidden, q_heads, kv_heads, head_dim, ctx, dtype, device):
    gen = torch.Generator(device=device).manual_seed(0)

    def normal(*shape, mean=0.0, std=1.0):
        return (torch.randn(*shape, generator=gen, device=device) * std + mean).to(dtype)

    positions = torch.randint(ctx // 2, ctx, (batch,), generator=gen, device=device, dtype=torch.int32)
    angles = torch.arange(ctx, device=device)[:, None] * 10000.0 ** (
        -torch.arange(0, head_dim, 2, device=device) / head_dim)
    cos_sin = torch.cat([angles.cos(), angles.sin()], dim=-1).float()
    return (normal(batch, hidden), normal(hidden, mean=1.0, std=0.1),
            normal(hidden, (q_heads + 2 * kv_heads) * head_dim, std=0.02), cos_sin, positions,
            normal(batch, kv_heads, ctx, head_dim), normal(batch, kv_heads, ctx, head_dim),
            normal(q_heads * head_dim, hidden, std=0.02))


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
    parser.add_argument("--shape", action="append", help="B,H,HQ,HKV,D,CTX (repeatable)")
    parser.add_argument("--reps", type=int, default=50)
    args = parser.parse_args()
    device = "cuda"
    dtype = getattr(torch, args.dtype)
    for shape in args.shape or DEFAULT_SHAPES:
        batch, hidden, q_heads, kv_heads, head_dim, ctx = (int(v) for v in shape.split(","))
        inputs = make_inputs(batch, hidden, q_heads, kv_heads, head_dim, ctx, dtype, device)
        us = time_call(lambda inputs=inputs: decode_step(*inputs, eps=1e-5), args.reps, device)
        cached = int(inputs[4].sum()) * kv_heads * head_dim * 2 * torch.finfo(dtype).bits // 8
        print(f"decode_step B={batch} H={hidden} HQ={q_heads} HKV={kv_heads} D={head_dim} CTX={ctx} {args.dtype}: "
              f"{us:.1f} us ({cached / us / 1e3:.0f} GB/s of cache)")


if __name__ == "__main__":
    main()

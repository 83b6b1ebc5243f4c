"""mini_mlp's own benchmark: times mlp_block on a CUDA or ROCm GPU and prints one line per shape.

Usage: python bench.py [--dtype bfloat16] [--shape T,H,I ...] [--reps 50]
Each call is timed alone with device events after a cache flush; the median is printed.
"""

import argparse
import statistics

import torch
from mini_mlp.mlp import mlp_block

DEFAULT_SHAPES = ["4096,4096,14336", "2048,2048,5632"]


def make_inputs(tokens, hidden, inter, dtype, device):
    gen = torch.Generator(device=device).manual_seed(0)

    def normal(*shape, mean=0.0, std=1.0):
        return (torch.randn(*shape, generator=gen, device=device) * std + mean).to(dtype)

    return (normal(tokens, hidden), normal(hidden, mean=1.0, std=0.1), normal(hidden, inter, std=0.02),
            normal(hidden, inter, std=0.02), normal(inter, hidden, std=0.02))


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
    parser.add_argument("--shape", action="append", help="T,H,I (repeatable)")
    parser.add_argument("--reps", type=int, default=50)
    args = parser.parse_args()
    device = "cuda"
    dtype = getattr(torch, args.dtype)
    for shape in args.shape or DEFAULT_SHAPES:
        tokens, hidden, inter = (int(v) for v in shape.split(","))
        inputs = make_inputs(tokens, hidden, inter, dtype, device)
        us = time_call(lambda inputs=inputs: mlp_block(*inputs, eps=1e-5), args.reps, device)
        tflops = 6 * tokens * hidden * inter / us / 1e6
        print(f"mlp_block T={tokens} H={hidden} I={inter} {args.dtype}: {us:.1f} us ({tflops:.1f} TFLOP/s)")


if __name__ == "__main__":
    main()

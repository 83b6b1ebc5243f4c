"""mini_head's own benchmark: times head_logprobs on a CUDA or ROCm GPU and prints one line per shape.

Usage: python bench.py [--dtype bfloat16] [--shape M,H,V ...] [--reps 50]
Each call is timed alone with device events after a cache flush; the median is printed.
"""

import argparse
import statistics

import torch
from mini_head.head import head_logprobs

DEFAULT_SHAPES = ["16,4096,128256", "64,4096,32000"]


def make_inputs(rows, hidden, vocab, dtype, device):
    gen = torch.Generator(device=device).manual_seed(0)

    def normal(*shape, mean=0.0, std=1.0):
        return (torch.randn(*shape, generator=gen, device=device) * std + mean).to(dtype)

    return normal(rows, hidden), normal(hidden, mean=1.0, std=0.1), normal(vocab, hidden, std=0.02)


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
    parser.add_argument("--shape", action="append", help="M,H,V (repeatable)")
    parser.add_argument("--reps", type=int, default=50)
    args = parser.parse_args()
    device = "cuda"
    dtype = getattr(torch, args.dtype)
    for shape in args.shape or DEFAULT_SHAPES:
        rows, hidden, vocab = (int(v) for v in shape.split(","))
        inputs = make_inputs(rows, hidden, vocab, dtype, device)
        us = time_call(lambda inputs=inputs: head_logprobs(*inputs, eps=1e-5), args.reps, device)
        gbs = (vocab * hidden * torch.finfo(dtype).bits // 8 + 4 * rows * vocab) / us / 1e3
        print(f"head_logprobs M={rows} H={hidden} V={vocab} {args.dtype}: {us:.1f} us ({gbs:.0f} GB/s)")


if __name__ == "__main__":
    main()

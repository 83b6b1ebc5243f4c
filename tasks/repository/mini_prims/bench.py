"""mini_prims' own benchmark: times route_tokens on a CUDA or ROCm GPU and prints one line per shape.

Usage: python bench.py [--shape T,K,E ...] [--reps 50]
Each call is timed alone with device events after a cache flush; the median is printed.
"""

import argparse
import functools
import statistics

import torch
from mini_prims.routing import route_tokens

DEFAULT_SHAPES = ["131072,8,128", "131072,6,64", "262144,2,8"]


def make_inputs(tokens, top_k, experts, device):
    gen = torch.Generator(device=device).manual_seed(0)
    ids = torch.randint(0, experts, (tokens, top_k), generator=gen, device=device, dtype=torch.int32)
    weights = torch.rand(tokens, top_k, generator=gen, device=device)
    return ids, weights


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
    parser.add_argument("--shape", action="append", help="T,K,E (repeatable)")
    parser.add_argument("--reps", type=int, default=50)
    args = parser.parse_args()
    device = "cuda"
    for shape in args.shape or DEFAULT_SHAPES:
        tokens, top_k, experts = (int(v) for v in shape.split(","))
        ids, weights = make_inputs(tokens, top_k, experts, device)
        us = time_call(functools.partial(route_tokens, ids, weights, experts), args.reps, device)
        entries = tokens * top_k
        print(f"route_tokens T={tokens} K={top_k} E={experts}: {us:.1f} us ({entries / us:.0f} M entries/s)")


if __name__ == "__main__":
    main()

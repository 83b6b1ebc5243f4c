"""mini_train's own benchmark: times train_step on a CUDA or ROCm GPU and prints one line per shape.

Usage: python bench.py [--dtype bfloat16] [--shape T,IN,HID,OUT ...] [--reps 30]
Each call is timed alone with device events after a cache flush; the median is printed.
"""

import argparse
import statistics

import torch
from mini_train.train_step import train_step

DEFAULT_SHAPES = ["1024,1024,4096,1024", "512,2048,8192,2048"]
HYPER = {"step": 10, "lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.1, "max_norm": 1.0}


def make_inputs(tokens, d_in, hidden, d_out, dtype, device):
    gen = torch.Generator(device=device).manual_seed(0)

    def normal(*shape, std=1.0, dt=torch.float32):
        return (torch.randn(*shape, generator=gen, device=device) * std).to(dt)

    def uniform(*shape, low, high):
        return torch.rand(*shape, generator=gen, device=device) * (high - low) + low

    shapes = [(d_in, hidden), (hidden,), (hidden, d_out), (d_out,)]
    params = [normal(*s, std=0.02) for s in shapes]
    firsts = [normal(*s, std=1e-2) for s in shapes]
    seconds = [uniform(*s, low=1e-4, high=1e-3) for s in shapes]
    return normal(tokens, d_in, dt=dtype), normal(tokens, d_out, dt=dtype), *params, *firsts, *seconds


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
    parser.add_argument("--shape", action="append", help="T,IN,HID,OUT (repeatable)")
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    device = "cuda"
    dtype = getattr(torch, args.dtype)
    for shape in args.shape or DEFAULT_SHAPES:
        tokens, d_in, hidden, d_out = (int(v) for v in shape.split(","))
        inputs = make_inputs(tokens, d_in, hidden, d_out, dtype, device)
        us = time_call(lambda inputs=inputs: train_step(*inputs, **HYPER), args.reps, device)
        params = d_in * hidden + hidden + hidden * d_out + d_out
        tflops = (4 * tokens * d_in * hidden + 6 * tokens * hidden * d_out) / us / 1e6
        print(
            f"train_step T={tokens} IN={d_in} HID={hidden} OUT={d_out} {args.dtype}: {us:.1f} us "
            f"({params / 1e6:.1f}M params, {tflops:.1f} TFLOP/s)"
        )


if __name__ == "__main__":
    main()

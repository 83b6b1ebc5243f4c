"""A Triton kernel that doubles a vector (y = 2 * x), and a wrong one that triples it: the
candidates of the runner's and executors' end-to-end tests (Triton's interpreter on CPU)."""

SCALE_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _scale(x_ptr, y_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * FACTOR, mask=mask)


def scale(x):
    y = torch.empty_like(x)
    _scale[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), FACTOR=2.0, BLOCK=256)
    return y
"""
WRONG_KERNEL = SCALE_KERNEL.replace("FACTOR=2.0", "FACTOR=3.0")

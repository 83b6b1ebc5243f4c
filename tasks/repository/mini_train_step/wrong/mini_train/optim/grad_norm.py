"""The clipping coefficient from the global grad norm in one read of the gradients, written as
max_norm / (norm + 1e-6) without capping it at 1 (gradients below max_norm get scaled up)."""

import torch
import triton
import triton.language as tl

_BLOCK = 4096
_MAX_PROGRAMS = 512


@triton.jit
def _partial_squares_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, step):
        idx = start + offs
        x = tl.load(x_ptr + idx, mask=idx < n, other=0.0)
        acc += x * x
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _coef_kernel(part_ptr, coef_ptr, count, max_norm, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, count, BLOCK):
        acc += tl.load(part_ptr + start + offs, mask=start + offs < count, other=0.0)
    norm = tl.sqrt(tl.sum(acc, axis=0))
    tl.store(coef_ptr, max_norm / (norm + 1e-6))


def clip_coefficient(grads: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """min(max_norm / (global L2 norm + 1e-6), 1) as a one-element float32 tensor."""
    device = grads[0].device
    programs = [max(1, min(_MAX_PROGRAMS, triton.cdiv(g.numel(), _BLOCK))) for g in grads]
    partials = torch.empty((sum(programs),), dtype=torch.float32, device=device)
    offset = 0
    for g, count in zip(grads, programs):
        _partial_squares_kernel[(count,)](g, partials[offset:], g.numel(), BLOCK=_BLOCK, num_warps=8)
        offset += count
    coef = torch.empty((1,), dtype=torch.float32, device=device)
    _coef_kernel[(1,)](partials, coef, offset, max_norm, BLOCK=1024)
    return coef

"""The global L2 norm of a list of float32 gradient tensors, left on the device."""

import torch
import triton
import triton.language as tl

_BLOCK = 1024


@triton.jit
def _square_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * x, mask=mask)


@triton.jit
def _block_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def _sqrt_of_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
    tl.store(out_ptr, tl.sqrt(tl.sum(acc, axis=0)))


def sum_of_squares(x: torch.Tensor, out: torch.Tensor) -> None:
    """Writes sum(x**2) of a contiguous float32 tensor into the one-element tensor `out`."""
    n = x.numel()
    values = torch.empty((n,), dtype=torch.float32, device=x.device)
    _square_kernel[(triton.cdiv(n, _BLOCK),)](x, values, n, BLOCK=_BLOCK)
    while n > 1:
        partial = triton.cdiv(n, _BLOCK)
        sums = out if partial == 1 else torch.empty((partial,), dtype=torch.float32, device=x.device)
        _block_sum_kernel[(partial,)](values, sums, n, BLOCK=_BLOCK)
        values, n = sums, partial
    if x.numel() == 1:
        out.copy_(values)


def global_grad_norm(grads: list[torch.Tensor]) -> torch.Tensor:
    """sqrt(sum over every tensor of sum(g**2)) as a one-element float32 tensor."""
    device = grads[0].device
    per_tensor = torch.empty((len(grads),), dtype=torch.float32, device=device)
    for i, g in enumerate(grads):
        sum_of_squares(g, per_tensor[i : i + 1])
    norm = torch.empty((1,), dtype=torch.float32, device=device)
    _sqrt_of_sum_kernel[(1,)](per_tensor, norm, len(grads), BLOCK=32)
    return norm

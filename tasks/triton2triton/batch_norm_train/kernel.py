"""batch_norm_train: BatchNorm2d forward in training mode on NCHW input (batch statistics per channel)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _channel_stats_kernel(x_ptr, mean_ptr, rstd_ptr, N, C, HW, eps, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    count = N * HW
    # Pass 1: the channel mean.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for n in range(0, N):
        base = x_ptr + (n * C + c).to(tl.int64) * HW
        for start in range(0, HW, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(base + cols, mask=cols < HW, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / count
    # Pass 2: the biased variance, around the mean.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for n in range(0, N):
        base = x_ptr + (n * C + c).to(tl.int64) * HW
        for start in range(0, HW, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < HW
            d = tl.where(mask, tl.load(base + cols, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
            acc += d * d
    var = tl.sum(acc, axis=0) / count
    tl.store(mean_ptr + c, mean)
    tl.store(rstd_ptr + c, 1.0 / tl.sqrt(var + eps))


@triton.jit
def _normalize_kernel(x_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, y_ptr, total, C, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    c = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + c, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + c, mask=mask, other=0.0)
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    y = (x - mean) * (rstd * w) + b
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def batch_norm_train(x, weight, bias, *, eps):
    """(y like x, mean (C,) float32, rstd (C,) float32) for contiguous NCHW x and float32 weight, bias (C,)."""
    N, C, H, W = x.shape
    HW = H * W
    y = torch.empty_like(x)
    mean = torch.empty(C, dtype=torch.float32, device=x.device)
    rstd = torch.empty(C, dtype=torch.float32, device=x.device)
    _channel_stats_kernel[(C,)](x, mean, rstd, N, C, HW, eps, BLOCK=1024, num_warps=4)
    total = x.numel()
    block = 1024
    _normalize_kernel[(triton.cdiv(total, block),)](
        x, weight, bias, mean, rstd, y, total, C, HW, BLOCK=block, num_warps=4
    )
    return y, mean, rstd

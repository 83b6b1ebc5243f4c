"""causal_conv1d over independent chunks that treats the positions before each chunk as
padding (zeros), so every chunk after the first loses its W - 1 inputs from the previous chunk."""

import torch
import triton
import triton.language as tl


@triton.jit
def _conv_kernel(x_ptr, w_ptr, b_ptr, out_ptr, D, L, W: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    d = tl.program_id(0) % D
    t = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x_row = x_ptr + row * L
    acc = tl.zeros([BLOCK], dtype=tl.float32) + tl.load(b_ptr + d).to(tl.float32)
    for w in tl.static_range(W):
        src = t - (W - 1) + w
        xv = tl.load(x_row + src, mask=(src >= tl.program_id(1) * BLOCK) & (src < L), other=0.0).to(tl.float32)
        acc += tl.load(w_ptr + d * W + w).to(tl.float32) * xv
    tl.store(out_ptr + row * L + t, (acc * tl.sigmoid(acc)).to(out_ptr.dtype.element_ty), mask=t < L)


def causal_conv1d(x, weight, bias):
    B, D, L = x.shape
    W = weight.shape[1]
    out = torch.empty_like(x)
    block = min(2048, triton.next_power_of_2(L))
    _conv_kernel[(B * D, triton.cdiv(L, block))](x, weight, bias, out, D, L, W=W, BLOCK=block,
                                                 num_warps=8 if block >= 2048 else 4)
    return out

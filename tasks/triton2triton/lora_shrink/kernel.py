"""lora_shrink: the LoRA A projection, each token times the A matrix of its own adapter."""

import torch
import triton
import triton.language as tl


@triton.jit
def _shrink_kernel(x_ptr, a_ptr, idx_ptr, y_ptr, H, R, scale, BLOCK_R: tl.constexpr, BLOCK_H: tl.constexpr):
    # One program per token: y[t, :] = scale * lora_a[idx[t]] @ x[t].
    t = tl.program_id(0).to(tl.int64)
    adapter = tl.load(idx_ptr + t)
    rr = tl.arange(0, BLOCK_R)
    r_ok = rr < R
    acc = tl.zeros([BLOCK_R, BLOCK_H], dtype=tl.float32)
    if adapter >= 0:
        a_base = a_ptr + adapter.to(tl.int64) * R * H
        for h0 in range(0, H, BLOCK_H):
            hh = h0 + tl.arange(0, BLOCK_H)
            h_ok = hh < H
            xv = tl.load(x_ptr + t * H + hh, mask=h_ok, other=0.0).to(tl.float32)
            av = tl.load(a_base + rr[:, None] * H + hh[None, :], mask=r_ok[:, None] & h_ok[None, :],
                         other=0.0).to(tl.float32)
            acc += av * xv[None, :]
    y = tl.sum(acc, axis=1) * scale
    tl.store(y_ptr + t * R + rr, y.to(y_ptr.dtype.element_ty), mask=r_ok)


def lora_shrink(x, lora_a, idx, scale):
    """(T, R): scale * x[t] @ lora_a[idx[t]].T for every token t (zeros where idx[t] == -1)."""
    T, H = x.shape
    L, R, _ = lora_a.shape
    y = torch.empty((T, R), dtype=x.dtype, device=x.device)
    _shrink_kernel[(T,)](x, lora_a, idx, y, H, R, scale, BLOCK_R=triton.next_power_of_2(R), BLOCK_H=256,
                         num_warps=4)
    return y

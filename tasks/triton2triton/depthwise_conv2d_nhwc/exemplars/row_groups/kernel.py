"""depthwise_conv2d_nhwc with one program per (group of R output rows, run of a row's elements).

The baseline gives each lane one output element: it spends three integer divisions per element
recovering (n, h, w, c), recomputes the bounds of every tap per element, and loads each tap's input
and weight as scalar 2- or 4-byte loads (2 * K * K of them per output), so it is bound by instruction
issue long before memory. With stride 1 and same padding an output row (n, h) is one contiguous run
of W * C elements, and the tap (i, j) of its element k = w * C + c sits at k + (j - pad) * C of input
row h + i - pad, in bounds exactly when 0 <= k + (j - pad) * C < W * C: no division per tap, and each
tap is one contiguous load with 16-byte vectors. A program computes R output rows of the same run
at once, an (R, BLOCK) tile: a tap is one (R, BLOCK) load, and its weights, one BLOCK vector (the
channel k % C, computed once), serve all R rows. Bias first, then the taps in the baseline's order.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _dwconv_kernel(x_ptr, w_ptr, b_ptr, out_ptr, H, W, C, K: tl.constexpr, R: tl.constexpr, BLOCK: tl.constexpr):
    n = tl.program_id(2)
    h = tl.program_id(1) * R + tl.arange(0, R)
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row_len = W * C
    kmask = k < row_len
    c = k % C
    x_img = x_ptr + n.to(tl.int64) * H * row_len
    acc = tl.zeros([R, BLOCK], dtype=tl.float32)
    acc += tl.load(b_ptr + c, mask=kmask, other=0.0).to(tl.float32)[None, :]
    for i in tl.static_range(K):
        hi = h + i - (K - 1) // 2
        row_ok = (hi >= 0) & (hi < H)
        for j in tl.static_range(K):
            src = k + (j - (K - 1) // 2) * C
            m = row_ok[:, None] & (kmask & (src >= 0) & (src < row_len))[None, :]
            xv = tl.load(x_img + hi[:, None] * row_len + src[None, :], mask=m, other=0.0)
            wv = tl.load(w_ptr + (i * K + j) * C + c, mask=kmask, other=0.0)
            acc += xv.to(tl.float32) * wv.to(tl.float32)[None, :]
    out_img = out_ptr + n.to(tl.int64) * H * row_len
    tl.store(
        out_img + h[:, None] * row_len + k[None, :],
        acc.to(out_ptr.dtype.element_ty),
        mask=(h < H)[:, None] & kmask[None, :],
    )


def depthwise_conv2d_nhwc(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    N, H, W, C = x.shape
    K = weight.shape[0]
    out = torch.empty_like(x)
    # 16-byte vectors along the run (8 16-bit or 4 float32 elements a lane); 4 rows a program, 2 for
    # 16-bit 5x5 (its 25 taps' loads, all in flight at once, would not fit the registers).
    num_warps = 4
    block = min(triton.next_power_of_2(W * C), num_warps * 32 * (16 // x.element_size()))
    rows = min(4 if K <= 3 or x.element_size() >= 4 else 2, triton.next_power_of_2(H))
    grid = (triton.cdiv(W * C, block), triton.cdiv(H, rows), N)
    _dwconv_kernel[grid](x, weight, bias, out, H, W, C, K=K, R=rows, BLOCK=block, num_warps=num_warps)
    return out

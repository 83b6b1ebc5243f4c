"""upsample_bilinear: 2x bilinear upsampling (align_corners=False) of an (N, C, H, W) batch."""

import torch
import triton
import triton.language as tl


@triton.jit
def _upsample_kernel(x_ptr, out_ptr, H, W, OH, OW, BLOCK: tl.constexpr):
    # One program per (output row, BLOCK output columns); one lane per output pixel.
    row = tl.program_id(0)  # plane * OH + oh
    plane = row // OH
    oh = row % OH
    ow = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = ow < OW
    sh = tl.maximum((oh + 0.5) * 0.5 - 0.5, 0.0)
    h0 = sh.to(tl.int32)
    h1 = tl.minimum(h0 + 1, H - 1)
    lh = sh - h0
    sw = tl.maximum((ow + 0.5) * 0.5 - 0.5, 0.0)
    w0 = sw.to(tl.int32)
    w1 = tl.minimum(w0 + 1, W - 1)
    lw = sw - w0
    src = x_ptr + plane.to(tl.int64) * H * W
    x00 = tl.load(src + h0 * W + w0, mask=mask, other=0.0).to(tl.float32)
    x01 = tl.load(src + h0 * W + w1, mask=mask, other=0.0).to(tl.float32)
    x10 = tl.load(src + h1 * W + w0, mask=mask, other=0.0).to(tl.float32)
    x11 = tl.load(src + h1 * W + w1, mask=mask, other=0.0).to(tl.float32)
    top = (1.0 - lw) * x00 + lw * x01
    bottom = (1.0 - lw) * x10 + lw * x11
    out = (1.0 - lh) * top + lh * bottom
    tl.store(out_ptr + row.to(tl.int64) * OW + ow, out.to(out_ptr.dtype.element_ty), mask=mask)


def upsample_bilinear(x: torch.Tensor) -> torch.Tensor:
    """Bilinear 2x upsampling of x (N, C, H, W), align_corners=False; a new (N, C, 2H, 2W) tensor."""
    N, C, H, W = x.shape
    OH, OW = 2 * H, 2 * W
    out = torch.empty((N, C, OH, OW), dtype=x.dtype, device=x.device)
    block = 256
    _upsample_kernel[(N * C * OH, triton.cdiv(OW, block))](x, out, H, W, OH, OW, BLOCK=block)
    return out

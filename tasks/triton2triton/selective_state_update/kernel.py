"""selective_state_update: one decode step of a Mamba selective state-space layer."""

import torch
import triton
import triton.language as tl


@triton.jit
def _ssu_kernel(state_ptr, x_ptr, dt_ptr, a_ptr, b_ptr, c_ptr, dskip_ptr, z_ptr, dtb_ptr, out_ptr, new_ptr,
                D, N: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    rd = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    rn = tl.arange(0, N)
    dmask = rd < D
    x = tl.load(x_ptr + b * D + rd, mask=dmask, other=0.0).to(tl.float32)
    z = tl.load(z_ptr + b * D + rd, mask=dmask, other=0.0).to(tl.float32)
    v = tl.load(dt_ptr + b * D + rd, mask=dmask, other=0.0).to(tl.float32) + tl.load(dtb_ptr + rd, mask=dmask,
                                                                                    other=0.0)
    delta = tl.where(v <= 20.0, tl.log(1.0 + tl.exp(v)), v)
    bm = tl.load(b_ptr + b * N + rn).to(tl.float32)
    cm = tl.load(c_ptr + b * N + rn).to(tl.float32)
    offs = rd[:, None] * N + rn[None, :]
    a = tl.load(a_ptr + offs, mask=dmask[:, None], other=0.0)
    s = tl.load(state_ptr + b * D * N + offs, mask=dmask[:, None], other=0.0)
    s = s * tl.exp(a * delta[:, None]) + bm[None, :] * (delta * x)[:, None]
    tl.store(new_ptr + b * D * N + offs, s, mask=dmask[:, None])
    y = tl.sum(s * cm[None, :], axis=1) + tl.load(dskip_ptr + rd, mask=dmask, other=0.0) * x
    out = y * z * tl.sigmoid(z)
    tl.store(out_ptr + b * D + rd, out.to(out_ptr.dtype.element_ty), mask=dmask)


def selective_state_update(state, x, dt, A, Bm, C, Dskip, z, dt_bias):
    """(out (B, D) of x's dtype, new_state (B, D, N) float32) for one decode step."""
    B, D, N = state.shape
    out = torch.empty_like(x)
    new_state = torch.empty_like(state)
    block_d = 16
    _ssu_kernel[(B, triton.cdiv(D, block_d))](state, x, dt, A, Bm, C, Dskip, z, dt_bias, out, new_state, D, N=N,
                                              BLOCK_D=block_d)
    return out, new_state

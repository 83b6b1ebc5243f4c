"""selective_state_update with wide tiles whose output reads the state before this step's
update (y from the old state)."""

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _ssu_kernel(state_ptr, x_ptr, dt_ptr, a_ptr, b_ptr, c_ptr, dskip_ptr, z_ptr, dtb_ptr, out_ptr, new_ptr,
                D, N: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    rd = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    rn = tl.arange(0, N)
    dmask = rd < D
    offs = rd[:, None] * N + rn[None, :]
    s = tl.load(state_ptr + b * D * N + offs, mask=dmask[:, None], other=0.0)
    a = tl.load(a_ptr + offs, mask=dmask[:, None], other=0.0)
    x = tl.load(x_ptr + b * D + rd, mask=dmask, other=0.0).to(tl.float32)
    z = tl.load(z_ptr + b * D + rd, mask=dmask, other=0.0).to(tl.float32)
    v = tl.load(dt_ptr + b * D + rd, mask=dmask, other=0.0).to(tl.float32) + tl.load(dtb_ptr + rd, mask=dmask,
                                                                                    other=0.0)
    delta = tl.where(v <= 20.0, tl.log(1.0 + tl.exp(v)), v)
    bm = tl.load(b_ptr + b * N + rn).to(tl.float32)
    cm = tl.load(c_ptr + b * N + rn).to(tl.float32)
    s_new = s * tl.math.exp2(a * (delta * LOG2E)[:, None]) + bm[None, :] * (delta * x)[:, None]
    tl.store(new_ptr + b * D * N + offs, s_new, mask=dmask[:, None])
    y = tl.sum(s * cm[None, :], axis=1) + tl.load(dskip_ptr + rd, mask=dmask, other=0.0) * x
    out = y * z * tl.sigmoid(z)
    tl.store(out_ptr + b * D + rd, out.to(out_ptr.dtype.element_ty), mask=dmask)


def selective_state_update(state, x, dt, A, Bm, C, Dskip, z, dt_bias):
    B, D, N = state.shape
    out = torch.empty_like(x)
    new_state = torch.empty_like(state)
    block_d = min(128, triton.next_power_of_2(D))
    _ssu_kernel[(B, triton.cdiv(D, block_d))](state, x, dt, A, Bm, C, Dskip, z, dt_bias, out, new_state, D, N=N,
                                              BLOCK_D=block_d, num_warps=4)
    return out, new_state

"""layer_norm_bwd: LayerNorm backward (input, weight and bias gradients) from saved statistics."""

import torch
import triton
import triton.language as tl


@triton.jit
def _dx_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    dy = tl.load(dy_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = w * dy
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(dx_ptr + row * N + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _dwdb_partial_kernel(dy_ptr, x_ptr, mean_ptr, rstd_ptr, pw_ptr, pb_ptr, M, N,
                         ROWS_PER_PROG: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    dw = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for r0 in range(0, ROWS_PER_PROG, BLOCK_M):
        rows = pid_m * ROWS_PER_PROG + r0 + tl.arange(0, BLOCK_M)
        rmask = rows < M
        mask = rmask[:, None] & cmask[None, :]
        offs = rows.to(tl.int64)[:, None] * N + cols[None, :]
        dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(mean_ptr + rows, mask=rmask, other=0.0)
        rstd = tl.load(rstd_ptr + rows, mask=rmask, other=0.0)
        dw += dy * (x - mean[:, None]) * rstd[:, None]
        db += dy
    tl.store(pw_ptr + pid_m * N + cols, tl.sum(dw, axis=0), mask=cmask)
    tl.store(pb_ptr + pid_m * N + cols, tl.sum(db, axis=0), mask=cmask)


@triton.jit
def _sum_rows_kernel(p_ptr, out_ptr, P, N, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    acc = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    for p0 in range(0, P, BLOCK_P):
        rows = p0 + tl.arange(0, BLOCK_P)
        acc += tl.load(p_ptr + rows[:, None] * N + cols[None, :], mask=(rows[:, None] < P) & cmask[None, :],
                       other=0.0)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0), mask=cmask)


def layer_norm_bwd(dy, x, weight, mean, rstd):
    """(dx, dw, db): dx like x; dw and db float32 (N,)."""
    M, N = x.shape
    dx = torch.empty_like(x)
    _dx_kernel[(M,)](dy, x, weight, mean, rstd, dx, N, BLOCK=triton.next_power_of_2(N), num_warps=8)
    rows_per_prog, block_n = 256, 128
    parts = triton.cdiv(M, rows_per_prog)
    pw = torch.empty((parts, N), dtype=torch.float32, device=x.device)
    pb = torch.empty((parts, N), dtype=torch.float32, device=x.device)
    _dwdb_partial_kernel[(triton.cdiv(N, block_n), parts)](dy, x, mean, rstd, pw, pb, M, N,
                                                           ROWS_PER_PROG=rows_per_prog, BLOCK_M=32,
                                                           BLOCK_N=block_n)
    dw = torch.empty(N, dtype=torch.float32, device=x.device)
    db = torch.empty(N, dtype=torch.float32, device=x.device)
    _sum_rows_kernel[(triton.cdiv(N, block_n),)](pw, dw, parts, N, BLOCK_P=32, BLOCK_N=block_n)
    _sum_rows_kernel[(triton.cdiv(N, block_n),)](pb, db, parts, N, BLOCK_P=32, BLOCK_N=block_n)
    return dx, dw, db

"""batch_norm_train with the channel statistics split over the batch, each partial holding the tile's sum
and sum of squares (one pass), the variance taken as E[x^2] - mean^2 when the partials are merged.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _partial_stats_kernel(x_ptr, ps_ptr, pss_ptr, N, C, HW, G, NB: tl.constexpr, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    g = tl.program_id(1)
    ns = g * NB + tl.arange(0, NB)
    nmask = ns < N
    base = (ns.to(tl.int64) * C + c) * HW
    s = tl.zeros([NB, BLOCK], dtype=tl.float32)
    ss = tl.zeros([NB, BLOCK], dtype=tl.float32)
    for start in range(0, HW, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = nmask[:, None] & (cols[None, :] < HW)
        x = tl.load(x_ptr + base[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        s += x
        ss += x * x
    tl.store(ps_ptr + c * G + g, tl.sum(tl.sum(s, axis=1), axis=0))
    tl.store(pss_ptr + c * G + g, tl.sum(tl.sum(ss, axis=1), axis=0))


@triton.jit
def _combine_kernel(ps_ptr, pss_ptr, mean_ptr, rstd_ptr, N, HW, G, eps, NB: tl.constexpr, BLOCK_G: tl.constexpr):
    c = tl.program_id(0)
    gs = tl.arange(0, BLOCK_G)
    gmask = gs < G
    total = (N * HW).to(tl.float32)
    mean = tl.sum(tl.load(ps_ptr + c * G + gs, mask=gmask, other=0.0), axis=0) / total
    var = tl.maximum(tl.sum(tl.load(pss_ptr + c * G + gs, mask=gmask, other=0.0), axis=0) / total - mean * mean, 0.0)
    tl.store(mean_ptr + c, mean)
    tl.store(rstd_ptr + c, 1.0 / tl.sqrt(var + eps))


@triton.jit
def _normalize_kernel(x_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, y_ptr, N, C, HW, NB: tl.constexpr, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    ns = tl.program_id(1) * NB + tl.arange(0, NB)
    cols = tl.program_id(2) * BLOCK + tl.arange(0, BLOCK)
    mask = (ns[:, None] < N) & (cols[None, :] < HW)
    offs = ((ns.to(tl.int64) * C + c) * HW)[:, None] + cols[None, :]
    mean = tl.load(mean_ptr + c)
    scale = tl.load(rstd_ptr + c) * tl.load(w_ptr + c)
    b = tl.load(b_ptr + c)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, ((x - mean) * scale + b).to(y_ptr.dtype.element_ty), mask=mask)


def batch_norm_train(x, weight, bias, *, eps):
    N, C, H, W = x.shape
    HW = H * W
    y = torch.empty_like(x)
    mean = torch.empty(C, dtype=torch.float32, device=x.device)
    rstd = torch.empty(C, dtype=torch.float32, device=x.device)
    # Tiles of about 2048 values: whole planes of a few samples when planes are small.
    block = min(triton.next_power_of_2(HW), 2048)
    nb = max(1, min(triton.next_power_of_2(N), 2048 // block))
    groups = triton.cdiv(N, nb)
    warps = 8 if nb * block >= 2048 else 4
    pmean = torch.empty((C, groups), dtype=torch.float32, device=x.device)
    pm2 = torch.empty((C, groups), dtype=torch.float32, device=x.device)
    _partial_stats_kernel[(C, groups)](x, pmean, pm2, N, C, HW, groups, NB=nb, BLOCK=block, num_warps=warps)
    _combine_kernel[(C,)](
        pmean, pm2, mean, rstd, N, HW, groups, eps, NB=nb, BLOCK_G=max(16, triton.next_power_of_2(groups))
    )
    _normalize_kernel[(C, groups, triton.cdiv(HW, block))](
        x, weight, bias, mean, rstd, y, N, C, HW, NB=nb, BLOCK=block, num_warps=warps
    )
    return y, mean, rstd

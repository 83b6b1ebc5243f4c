"""w4a16_gemv: decode-time linear layer with int4 weights (per-group scales) and 16-bit activations."""

import torch
import triton
import triton.language as tl


@triton.jit
def _w4_gemv_kernel(x_ptr, qw_ptr, s_ptr, y_ptr, M, N, K, GROUP: tl.constexpr, IEEE: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # One program per BLOCK_N outputs for all M rows of x; one quantisation group (GROUP values of k)
    # per step: its packed words are unpacked to integers, multiplied on tensor cores and scaled.
    rm = tl.arange(0, BLOCK_M)
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    nmask = rn < N
    rc = tl.arange(0, GROUP // 8)
    shifts = tl.arange(0, 8) * 4
    K8 = K // 8
    KG = K // GROUP
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, GROUP):
        rk = k0 + tl.arange(0, GROUP)
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
        words = tl.load(qw_ptr + rn.to(tl.int64)[:, None] * K8 + (k0 // 8 + rc)[None, :], mask=nmask[:, None],
                        other=0)
        q = (words[:, :, None] >> shifts[None, None, :]) & 0xF  # nibble j of word c is k = 8 * c + j
        q = tl.reshape(q - 8, (BLOCK_N, GROUP)).to(x.dtype)
        s = tl.load(s_ptr + rn.to(tl.int64) * KG + k0 // GROUP, mask=nmask, other=0.0).to(tl.float32)
        if IEEE:
            part = tl.dot(x, tl.trans(q), input_precision="ieee")
        else:
            part = tl.dot(x, tl.trans(q))
        acc += part * s[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & nmask[None, :])


def w4a16_gemv(x, qweight, scales):
    """x (M, K) @ dequant(qweight).T with qweight (N, K / 8) int32 and scales (N, K / 128); (M, N) out."""
    M, K = x.shape
    N = qweight.shape[0]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    block_m, block_n = max(16, triton.next_power_of_2(M)), 64
    _w4_gemv_kernel[(triton.cdiv(N, block_n),)](x, qweight, scales, y, M, N, K, GROUP=128,
                                                IEEE=x.dtype == torch.float32, BLOCK_M=block_m, BLOCK_N=block_n)
    return y

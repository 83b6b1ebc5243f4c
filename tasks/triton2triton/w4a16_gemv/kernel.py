"""w4a16_gemv: decode-time linear layer with int4 weights (per-group scales) and 16-bit activations."""

import torch
import triton
import triton.language as tl


@triton.jit
def _w4_gemv_kernel(x_ptr, qw_ptr, s_ptr, y_ptr, N, K, GROUP: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr):
    m = tl.program_id(0).to(tl.int64)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    nmask = rn < N
    K8 = K // 8
    KG = K // GROUP
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + m * K + rk).to(tl.float32)
        words = tl.load(qw_ptr + rn.to(tl.int64)[:, None] * K8 + (rk // 8)[None, :], mask=nmask[:, None], other=0)
        q = (words >> ((rk % 8) * 4)[None, :]) & 0xF
        s = tl.load(s_ptr + rn.to(tl.int64)[:, None] * KG + (rk // GROUP)[None, :], mask=nmask[:, None],
                    other=0.0).to(tl.float32)
        acc += (q - 8).to(tl.float32) * s * x[None, :]
    tl.store(y_ptr + m * N + rn, tl.sum(acc, axis=1).to(y_ptr.dtype.element_ty), mask=nmask)


def w4a16_gemv(x, qweight, scales):
    """x (M, K) @ dequant(qweight).T with qweight (N, K / 8) int32 and scales (N, K / 128); (M, N) out."""
    M, K = x.shape
    N = qweight.shape[0]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    block_n = 32
    _w4_gemv_kernel[(M, triton.cdiv(N, block_n))](x, qweight, scales, y, N, K, GROUP=128, BLOCK_N=block_n,
                                                  BLOCK_K=128)
    return y

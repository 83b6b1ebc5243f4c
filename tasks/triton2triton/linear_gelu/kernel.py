"""linear_gelu: the up projection of a GPT/BERT MLP, y = gelu_tanh(x @ w + bias)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm.to(tl.int64)[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + kk.to(tl.int64)[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _bias_gelu_kernel(h_ptr, bias_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    v = tl.load(h_ptr + row * N + cols, mask=mask, other=0.0) + tl.load(bias_ptr + cols, mask=mask,
                                                                         other=0.0).to(tl.float32)
    inner = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    t = 2.0 * tl.sigmoid(2.0 * inner) - 1.0  # tanh
    tl.store(y_ptr + row * N + cols, (0.5 * v * (1.0 + t)).to(y_ptr.dtype.element_ty), mask=mask)


def linear_gelu(x, w, bias):
    """gelu_tanh(x @ w + bias) for x (M, K), w (K, N) row-major, bias (N,); (M, N) of x's dtype."""
    M, K = x.shape
    N = w.shape[1]
    h = torch.empty((M, N), dtype=torch.float32, device=x.device)
    bm, bn, bk = 64, 64, 32
    _matmul_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](x, w, h, M, N, K, IEEE=x.dtype == torch.float32,
                                                            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    block = 1024
    _bias_gelu_kernel[(M, triton.cdiv(N, block))](h, bias, y, N, BLOCK=block)
    return y

"""lora_expand: the LoRA B projection of each token with its own adapter, added to the base output."""

import torch
import triton
import triton.language as tl


@triton.jit
def _expand_kernel(base_ptr, d_ptr, b_ptr, idx_ptr, out_ptr, N, R, BLOCK_N: tl.constexpr, BLOCK_R: tl.constexpr):
    # One program per token: out[t, :] = base[t, :] + lora_b[idx[t]] @ delta[t].
    t = tl.program_id(0).to(tl.int64)
    adapter = tl.load(idx_ptr + t)
    rr = tl.arange(0, BLOCK_R)
    r_ok = rr < R
    d = tl.load(d_ptr + t * R + rr, mask=r_ok, other=0.0).to(tl.float32)
    b_base = b_ptr + tl.maximum(adapter, 0).to(tl.int64) * N * R
    for n0 in range(0, N, BLOCK_N):
        nn = n0 + tl.arange(0, BLOCK_N)
        n_ok = nn < N
        acc = tl.load(base_ptr + t * N + nn, mask=n_ok, other=0.0).to(tl.float32)
        if adapter >= 0:
            bv = tl.load(b_base + nn[:, None] * R + rr[None, :], mask=n_ok[:, None] & r_ok[None, :],
                         other=0.0).to(tl.float32)
            acc += tl.sum(bv * d[None, :], axis=1)
        tl.store(out_ptr + t * N + nn, acc.to(out_ptr.dtype.element_ty), mask=n_ok)


def lora_expand(base, delta, lora_b, idx):
    """(T, N): base[t] + delta[t] @ lora_b[idx[t]].T for every token t (base alone where idx[t] == -1)."""
    T, N = base.shape
    L, _, R = lora_b.shape
    out = torch.empty((T, N), dtype=base.dtype, device=base.device)
    _expand_kernel[(T,)](base, delta, lora_b, idx, out, N, R, BLOCK_N=128, BLOCK_R=triton.next_power_of_2(R),
                         num_warps=4)
    return out

"""merge_attn_states: merge two partial attention outputs by their log-sum-exps (cascade attention)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _merge_kernel(po_ptr, plse_ptr, so_ptr, slse_ptr, out_ptr, out_lse_ptr, H, D, BLOCK_D: tl.constexpr):
    # One program per (token, head): its two D-vectors and two log-sum-exps.
    t = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1)
    row = t * H + h
    a = tl.load(plse_ptr + row)
    b = tl.load(slse_ptr + row)
    m = tl.maximum(a, b)
    wa = tl.exp(a - m)
    wb = tl.exp(b - m)
    total = wa + wb
    offs = tl.arange(0, BLOCK_D)
    mask = offs < D
    po = tl.load(po_ptr + row * D + offs, mask=mask, other=0.0).to(tl.float32)
    so = tl.load(so_ptr + row * D + offs, mask=mask, other=0.0).to(tl.float32)
    out = po * (wa / total) + so * (wb / total)
    tl.store(out_ptr + row * D + offs, out.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_lse_ptr + row, m + tl.log(total))


def merge_attn_states(prefix_out, prefix_lse, suffix_out, suffix_lse):
    """(out (T, H, D) like prefix_out, out_lse (T, H) float32)."""
    T, H, D = prefix_out.shape
    out = torch.empty_like(prefix_out)
    out_lse = torch.empty((T, H), dtype=torch.float32, device=prefix_out.device)
    _merge_kernel[(T, H)](prefix_out, prefix_lse, suffix_out, suffix_lse, out, out_lse, H, D,
                          BLOCK_D=triton.next_power_of_2(D), num_warps=1)
    return out, out_lse

"""sampling_penalties as a copy plus a patch of the few penalised entries.

The baseline materialises a dense (T, V) int32 count table: it zero-fills it, counts into it with
atomics, then reads it back beside the logits for every entry, so each logit costs 4 more bytes
written and 4 more read than the copy it mostly is (for 16-bit logits the table is twice their
size). Here the count table is left uninitialised except at the entries the tokens touch: one
launch copies the logits to the output with 16-byte accesses while its other programs zero the
touched counts, a second counts with atomics, and a third recomputes only the touched entries
(duplicate ids write the same value).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_and_clear_kernel(logits_ptr, out_ptr, tokens_ptr, counts_ptr, TV, V, TL, L, COPIES,
                           BLOCK: tl.constexpr, TBLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid < COPIES:
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < TV
        tl.store(out_ptr + offs, tl.load(logits_ptr + offs, mask=inside), mask=inside)
    else:
        i = (pid - COPIES).to(tl.int64) * TBLOCK + tl.arange(0, TBLOCK)  # flat token index t * L + j
        valid = i < TL
        ids = tl.load(tokens_ptr + i, mask=valid, other=0)
        tl.store(counts_ptr + (i // L) * V + ids, tl.zeros([TBLOCK], dtype=tl.int32), mask=valid)


@triton.jit
def _count_kernel(tokens_ptr, counts_ptr, V, TL, L, TBLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * TBLOCK + tl.arange(0, TBLOCK)
    mask = i < TL
    ids = tl.load(tokens_ptr + i, mask=mask, other=0)
    tl.atomic_add(counts_ptr + (i // L) * V + ids, 1, mask=mask)


@triton.jit
def _patch_kernel(logits_ptr, tokens_ptr, counts_ptr, out_ptr, V, TL, L, rep, freq, pres, TBLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * TBLOCK + tl.arange(0, TBLOCK)
    mask = i < TL
    ids = tl.load(tokens_ptr + i, mask=mask, other=0)
    at = (i // L) * V + ids
    c = tl.load(counts_ptr + at, mask=mask, other=0).to(tl.float32)
    x = tl.load(logits_ptr + at, mask=mask, other=0.0).to(tl.float32)
    penalised = tl.where(x > 0, x / rep, x * rep) - freq * c - pres
    tl.store(out_ptr + at, penalised.to(out_ptr.dtype.element_ty), mask=mask)


def sampling_penalties(logits, tokens, rep, freq, pres):
    T, V = logits.shape
    L = tokens.shape[1]
    out = torch.empty_like(logits)
    counts = torch.empty((T, V), dtype=torch.int32, device=logits.device)  # only touched entries are used
    block = 16384 // logits.element_size()  # 16 KB per copy program
    tblock = 1024
    copies = triton.cdiv(T * V, block)
    token_programs = triton.cdiv(T * L, tblock)
    _copy_and_clear_kernel[(copies + token_programs,)](logits, out, tokens, counts, T * V, V, T * L, L, copies,
                                                       BLOCK=block, TBLOCK=tblock, num_warps=4)
    _count_kernel[(token_programs,)](tokens, counts, V, T * L, L, TBLOCK=tblock, num_warps=4)
    _patch_kernel[(token_programs,)](logits, tokens, counts, out, V, T * L, L, rep, freq, pres, TBLOCK=tblock,
                                     num_warps=4)
    return out

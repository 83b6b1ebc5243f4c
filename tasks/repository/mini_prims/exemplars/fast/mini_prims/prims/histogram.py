"""Histogram in one launch: no zeroed output to fill first.

The baseline fills a zeroed counts vector (one launch) and then adds each block's counts into it
with atomics (a second). Here the blocks add into a module-level accumulator that is kept zero
between calls, and the last block to finish (an atomic ticket) takes the totals out with an
atomic exchange for 0, writes them to the fresh output and resets the ticket: one launch. Integer
counts, so the order of the additions does not change a bit. The caller's calls are queued many
at a time, and a stream's queue of pending launches is finite: launches are what this saves.
"""

import torch
import triton
import triton.language as tl

_STATE: dict[tuple[str, int], tuple[torch.Tensor, torch.Tensor]] = {}  # (device, bins) -> (accumulator, ticket)


@triton.jit
def _histogram_kernel(keys_ptr, acc_ptr, ticket_ptr, counts_ptr, n, num_bins, BLOCK: tl.constexpr,
                      BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    keys = tl.load(keys_ptr + offs, mask=mask, other=0)
    local = tl.histogram(keys, BINS, mask=mask)
    bins = tl.arange(0, BINS)
    tl.atomic_add(acc_ptr + bins, local, mask=(bins < num_bins) & (local > 0))
    tl.debug_barrier()  # every thread's additions before the ticket (released with it)
    ticket = tl.atomic_add(ticket_ptr, 1)
    if ticket == tl.num_programs(0) - 1:
        totals = tl.atomic_xchg(acc_ptr + bins, tl.zeros([BINS], dtype=tl.int32), mask=bins < num_bins)
        tl.store(counts_ptr + bins, totals, mask=bins < num_bins)
        tl.atomic_xchg(ticket_ptr, 0)


def histogram(keys: torch.Tensor, num_bins: int) -> torch.Tensor:
    n = keys.numel()
    if n == 0:
        return torch.zeros(num_bins, dtype=torch.int32, device=keys.device)
    bins = triton.next_power_of_2(num_bins)
    state = _STATE.get((str(keys.device), bins))
    if state is None:
        state = (torch.zeros(bins, dtype=torch.int32, device=keys.device),
                 torch.zeros(1, dtype=torch.int32, device=keys.device))
        _STATE[(str(keys.device), bins)] = state
    counts = torch.empty(num_bins, dtype=torch.int32, device=keys.device)
    block = 4096
    _histogram_kernel[(triton.cdiv(n, block),)](keys, state[0], state[1], counts, n, num_bins, BLOCK=block,
                                                BINS=bins)
    return counts

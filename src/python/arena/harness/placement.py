"""Where a timed call's inputs lie in GPU memory: a new place for every call, on both sides.

Measured on the H200 (bench/placement_probe.py, bench/RESULTS.md): one 2-4 MiB copy, flushed and
warmed alike, reads up to 1.3-1.4x slower at one place in memory than at another (8-10% CV
across places), and it is steady at any one place. A process that draws every chunk's sets into
the blocks its allocator handed it the first time times all its calls at those few places, so
between two processes (the judge and the candidate's worker) a small kernel's no-op read 0.92 to
1.08, steady within an evaluation. Here each side copies every drawn set to a random place in a
large pool of its own: every call's place is a new draw from the same distribution on both
sides (in the probe, medians of 100 such calls: CV 0.4-0.7%, where one place per process gave
medians 8% apart). This did not remove the whole bias between the processes: end to end the
no-op still reads 0.96-1.09, from an offset of -0.13 to +0.27 us a call that stays the same for
a 1 MiB and a 4 MiB case of one evaluation (bench/RESULTS.md, session 7).

Outputs a kernel allocates come from its process's caching allocator, which hands a call the
block the last call freed: one place per process again. The worker held its last 8 outputs (for
the stale-output check) and the judge none, so the two sides differed in this too. Now every
call's outputs stay allocated until its chunk ends (Held), on both sides, in the one per-call
procedure (timing.run_calls): each call of a chunk writes to a place of its own; outputs the
harness allocates for a HIP launcher are allocated anew for every call, likewise (Held.renew).

Holding outputs is not enough for a small output: consecutive blocks of the allocator's small
pool keep one alignment, and what each side allocates between calls (the judge's checks of the
baseline's outputs, the worker's) sets which. An output that takes many atomic adds feels that:
the triton2triton histogram's 1 KiB of counters read 220, 300 or 395 us by where they lay
(bench/atomics_placement_probe.py), and its no-op read 0.82 between the processes. So before
every call a block of random size (Spacer) is taken from the same small pool, and given back
after the call: each call's small outputs start at a new offset, drawn alike on both sides.

A large set already spans many pages in one call (96 MiB read 1.0018 with a CV of 0.08%): it is
timed where it was drawn. The worker's copy of this code runs beside the candidate, which could
choose its inputs' places; it can equally choose where its own outputs live. docs/harness.md
names that limit.
"""

from __future__ import annotations

import random
from typing import Sequence

import torch

POOL_BYTES = 2 << 30
HOLD_BYTES = 1 << 30  # a chunk's outputs held at most
SPREAD_LIMIT = 64 << 20  # a set up to this size is scattered
_ALIGN = 4096  # every element type's alignment, and the step of the shift within a slot
_SHIFT = 2 << 20  # within its slot a set starts anywhere in a span of one large page


class Held:
    """A chunk's outputs kept allocated, while they are small and add up to at most HOLD_BYTES
    (a large output already spans many pages; holding it would only spend memory)."""

    def __init__(self) -> None:
        self.items: list[object] = []
        self.nbytes = 0

    def keep(self, result: object) -> bool:
        tensors = [result] if isinstance(result, torch.Tensor) else result if isinstance(result, (tuple, list)) else []
        size = sum(t.nbytes for t in tensors if isinstance(t, torch.Tensor))
        if 0 < size <= SPREAD_LIMIT and self.nbytes + size <= HOLD_BYTES:
            self.items.append(result)
            self.nbytes += size
            return True
        return False

    def renew(self, outputs: list[torch.Tensor]) -> None:
        """Outputs the harness allocates (a HIP launcher writes into them) as new tensors, held,
        in place of `outputs`' items, where they are small enough to hold: each call of a chunk then
        writes to a place of its own, as a kernel's own outputs do. One buffer for a whole chunk
        read the hip2hip histogram's no-op 0.951 on its 256 counters (bench/RESULTS.md, session 10)."""
        if not outputs:
            return
        fresh = [torch.empty_like(t) for t in outputs]
        if self.keep(fresh):
            outputs[:] = fresh


class Spacer:
    """A block of random size allocated just before a call and freed after it, so that outputs in
    the allocator's small pool (blocks up to 1 MiB) start at a new offset every call, on both
    sides. The offsets span 64 KiB, which covers the alignments that moved the histogram, and
    the gaps stay small enough to be filled by later calls (gaps up to 1 MiB between held
    outputs would open a new segment every few calls). Larger outputs come from the other pool
    and are not moved."""

    STEP = 512  # the caching allocator rounds small blocks to this
    LIMIT = 64 << 10

    def __init__(self, device: torch.device | None) -> None:
        self.device = device if device is not None and device.type == "cuda" else None  # ROCm's too
        self.rng = random.Random()  # seeded from the OS, like Scatter's

    def take(self) -> torch.Tensor | None:
        if self.device is None:  # no caching allocator to move (the CPU)
            return None
        size = self.rng.randrange(1, self.LIMIT // self.STEP) * self.STEP
        return torch.empty(size, dtype=torch.uint8, device=self.device)


def _aligned(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN


class Scatter:
    """A pool of device memory, allocated on first use, and the copying of sets into it."""

    def __init__(self, device: torch.device, pool_bytes: int = POOL_BYTES) -> None:
        self.device, self.pool_bytes = device, pool_bytes
        self.pool: torch.Tensor | None = None
        self.rng = random.Random()  # seeded from the OS: no other process can tell the places
        self.note = "nothing placed yet"  # what the last place() did, for the time stage's log

    def place(self, sets: Sequence[Sequence[torch.Tensor]]) -> list[list[torch.Tensor]]:
        """`sets`, each copied to a random place of the pool where they fit apart (no two sets
        share a byte); sets that are large, strided or not on the device are returned as drawn."""
        as_drawn = [list(s) for s in sets]
        self.note = "inputs where drawn"
        if not sets:
            return as_drawn
        tensors = [t for s in sets for t in s]
        if not all(isinstance(t, torch.Tensor) and t.device == self.device and t.is_contiguous() for t in tensors):
            self.note += " (not all contiguous on the device)"
            return as_drawn
        size = max(sum(_aligned(t.nbytes) for t in s) for s in sets)
        slot = size + _SHIFT
        slots = self.pool_bytes // slot
        if not size or size > SPREAD_LIMIT or slots < len(sets):
            self.note += f" ({size / 2**20:.1f} MiB a set: over {SPREAD_LIMIT >> 20} MiB or too many to fit apart)"
            return as_drawn
        self.note = f"inputs at random places of a {self.pool_bytes >> 20} MiB pool"
        if self.pool is None:
            self.pool = torch.empty(self.pool_bytes, dtype=torch.uint8, device=self.device)
        placed = []
        for one, index in zip(sets, self.rng.sample(range(slots), len(sets))):
            offset = index * slot + self.rng.randrange(_SHIFT // _ALIGN) * _ALIGN
            views = []
            for t in one:
                view = self.pool[offset : offset + t.nbytes].view(t.dtype).view(t.shape)
                view.copy_(t)
                views.append(view)
                offset += _aligned(t.nbytes)
            placed.append(views)
        return placed

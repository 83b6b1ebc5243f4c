"""Where a timed call's inputs and large outputs lie in GPU memory: a new place for every call,
on both sides.

Where a kernel's inputs lie moves its time, steadily at any one place, so a process that drew
every chunk's sets into the blocks its allocator first handed it timed all its calls at a few
places, and the judge and the candidate's worker differed (bench/placement_probe.py;
bench/results/2026-11-30.md, session 7). Each side copies every drawn set to a random place of
a large pool of its own (Scatter), large sets too: a GEMM reads its operands many times over
through L2 (bench/noop_chunks.py; bench/results/2026-12-02.md, session 13).

A kernel's own outputs come from its process's caching allocator, which hands a call the block
the last call freed: every call's outputs stay allocated until its chunk ends (Held), on both
sides, in the one per-call procedure (timing.run_calls), and outputs the harness allocates for
a HIP launcher are allocated anew for every call (Held.renew). A small output's alignment moves
a kernel of many atomic adds too (bench/atomics_placement_probe.py), so a Spacer aims each
call's first small output at a stratified offset (bench/results/2026-12-02.md, session 14).
Where a large output lies moves a streaming kernel by 1% (bench/output_placement_probe.py;
bench/results/2026-12-06.md, session 36), and the allocator gave each side's large outputs the
same few blocks for a whole evaluation: each side reserves a free block (reserve) that the
Spacer cuts a block of a random size from before each call, the large outputs after it.

The worker's copy of this code runs beside the candidate, which could choose its inputs' places;
it can equally choose where its own outputs live. docs/harness.md names that limit.
"""

from __future__ import annotations

import random
from typing import Sequence

import torch

POOL_BYTES = 2 << 30
MAX_POOL_BYTES = 8 << 30  # a pool grows to this at most, and only into memory the device has free
_SPARE = 1 << 30  # left free on the device when the pool grows
HOLD_BYTES = 1 << 30  # a chunk's outputs held at most
_ALIGN = 4096  # every element type's alignment, and the step of the shift within a slot
_SHIFT = 2 << 20  # within its slot a set starts anywhere in a span of one large page


class Held:
    """A chunk's outputs kept allocated while they add up to at most HOLD_BYTES (the chunk's
    memory budget counts them: judged_timing.CHUNK_BYTES)."""

    def __init__(self) -> None:
        self.items: list[object] = []
        self.nbytes = 0
        self.renewed = False

    def keep(self, result: object) -> bool:
        tensors = [result] if isinstance(result, torch.Tensor) else result if isinstance(result, (tuple, list)) else []
        size = sum(t.nbytes for t in tensors if isinstance(t, torch.Tensor))
        if size > 0 and self.nbytes + size <= HOLD_BYTES:
            self.items.append(result)
            self.nbytes += size
            return True
        return False

    def renew(self, outputs: list[torch.Tensor]) -> None:
        """Outputs the harness allocates (a HIP launcher writes into them) as new tensors, held,
        in place of `outputs`' items, while there is room to hold them: each call of a chunk then
        writes to a place of its own, as a kernel's own outputs do (one buffer for a whole chunk
        moved a no-op: bench/results/2026-12-01.md, session 10). The caller's own buffers are
        held to the chunk's end too (allocated before it, not counted): freed at its first call,
        their block was best fit for the next call's Spacer block, and that call's outputs missed
        the reserve (session 37)."""
        if not outputs:
            return
        fresh = [torch.empty_like(t) for t in outputs]
        if self.keep(fresh):
            if not self.renewed:
                self.items.append(list(outputs))
                self.renewed = True
            outputs[:] = fresh


_SMALL = 1 << 20  # the caching allocator's small pool holds blocks up to this; larger ones come from its large pool
_LARGE_REACH = (4 << 20, 512 << 20)  # how far a call's first large output may be moved: least, most
_RESERVE_MOST = 2 << 30
_reach = [0]  # this process's: how far Spacer.take moves a call's large outputs (reserve() sets it)
_need = [0]  # and the free block a chunk of those calls needs, 0 when none
landing = {"aimed": 0, "landed": 0}  # this process's calls whose large outputs were aimed, and landed there


def large_reach(count: int, call_bytes: int, free: int) -> int:
    """How far Spacer moves each large output of a chunk of `count` calls of `call_bytes` of
    outputs: about a call's outputs, within _LARGE_REACH and a reserve of a quarter of the free
    memory (less _SPARE) up to _RESERVE_MOST; 0 (not moved) when less is left or none is large."""
    if call_bytes <= _SMALL or count < 1:
        return 0
    most = min(_RESERVE_MOST, max(0, free - _SPARE) // 4)
    reach = min(max(call_bytes, _LARGE_REACH[0]), _LARGE_REACH[1], most // count - call_bytes - 2 * _SMALL)
    return reach if reach >= _LARGE_REACH[0] else 0


def free_large_blocks(device: torch.device) -> list[int]:
    """The sizes of the caching allocator's free blocks that an allocation of more than 1 MiB on
    the current stream may be cut from: its default large pool's, on `device`."""
    stream = torch.cuda.current_stream(device).cuda_stream
    index = device.index if device.index is not None else torch.cuda.current_device()
    sizes = []
    for segment in torch.cuda.memory_snapshot():
        if (segment.get("device"), segment.get("segment_type"), segment.get("stream")) != (index, "large", stream):
            continue
        if tuple(segment.get("segment_pool_id") or (0, 0)) != (0, 0):  # a private pool's (a graph's)
            continue
        sizes += [int(block["size"]) for block in segment.get("blocks", []) if block.get("state") == "inactive"]
    return sizes


def reserve(count: int, call_bytes: int, device: torch.device | None) -> None:
    """When a case's chunks of `count` calls of `call_bytes` of outputs are bound (lent.Lent, the
    worker's bind), with nothing of this process's pending on the GPU: a free block of the
    allocator's large pool for a chunk's large outputs and Spacer's large blocks, so each call's
    large outputs are cut from it at an offset of their own. The allocator would hand every
    chunk's outputs the same blocks, at one place for a whole evaluation on each side
    (bench/output_placement_probe.py). Made when the allocator holds too little free, and kept:
    the outputs and blocks cut from it merge back as freed."""
    _reach[0] = _need[0] = 0
    if device is None or device.type != "cuda":  # ROCm's too
        return
    reach = large_reach(count, call_bytes, torch.cuda.mem_get_info(device)[0])
    need = count * (call_bytes + reach + 2 * _SMALL)
    if reach and need > max(free_large_blocks(device), default=0):
        torch.cuda.empty_cache()  # no free block of the large pool but the reserve: best fit cuts from it
        # A segment of its own, freed at once (held free), poisoned as the worker's free blocks are.
        torch.full((need,), 0xFF, dtype=torch.uint8, device=device)
    _reach[0], _need[0] = reach, need if reach else 0


def make_room(device: torch.device | None) -> list[torch.Tensor]:
    """Before each chunk is queued (nothing of it on the GPU yet, the candidate's worker not yet
    behind `go`): a new reserve when the largest free block of the large pool is smaller than
    reserve() found a chunk needs and the device has room for one, then every other free block of
    that pool taken, for the caller to hold until the chunk ends, while the device has as much free
    again (a call's own scratch may need new memory): best fit then cuts each call's block of
    Spacer's, and its large outputs after it, from the reserve. Outputs held across chunks split
    the reserve (the worker keeps its last calls' outputs for the stale-output check), and a call
    whose outputs did not fit past its block got a new segment where the driver put it: about
    half the worker's calls (session 36). A block freed mid-chunk is not taken here and is best
    fit for the next Spacer block, so neither side frees one of its own before the chunk ends
    (worker._RECENT_OUTPUTS, Held.renew; session 37)."""
    need = _need[0]
    if not need or device is None or device.type != "cuda":
        return []
    sizes = sorted(free_large_blocks(device))
    free = torch.cuda.mem_get_info(device)[0]
    if max(sizes, default=0) < need <= free - _SPARE:
        torch.empty(need, dtype=torch.uint8, device=device)  # freed at once: held free by the allocator
        sizes, free = sorted(free_large_blocks(device)), torch.cuda.mem_get_info(device)[0]
    gaps = sizes[:-1]
    if sum(gaps) > free - _SPARE:
        return []
    return [torch.empty(size, dtype=torch.uint8, device=device) for size in gaps]


class Spacer:
    """Blocks taken from the allocator's small pool (blocks up to 1 MiB) just before each call, so
    that the call's first small output starts at an offset chosen for it, and kept until the
    chunk ends (as its outputs are: a freed gap would be refilled, and a run of calls would
    share one alignment). The offsets, modulo LIMIT, are stratified: every aligned run of 2, 4,
    8 ... 128 calls of a chunk covers every residue modulo 1, 2, 4 ... 64 KiB in STEP units once
    (the digits of the call's index scrambled at random, lower digits first), so each side's mix
    of alignments is the same in every chunk, not only on average: an atomics-heavy output's time
    follows its offset, and random spacers freed after each call left runs of one alignment
    (bench/atomics_placement_probe.py --harness-chunks; bench/results/2026-12-02.md, session 14).
    Larger outputs come from the other pool: a block of a random size up to the reach reserve()
    set is taken from that pool before each call too, so the call's large outputs start past it
    (in the reserve, when the caller holds what make_room took for the chunk)."""

    STEP = 512  # the caching allocator rounds small blocks to this
    LIMIT = 64 << 10
    _DIGITS = 7  # LIMIT // STEP == 1 << _DIGITS

    def __init__(self, device: torch.device | None) -> None:
        self.device = device if device is not None and device.type == "cuda" else None  # ROCm's too
        self.rng = random.Random()  # seeded from the OS, like Scatter's
        self.shift = self.rng.randrange(self.LIMIT // self.STEP)
        self.flips: list[dict[int, int]] = [{} for _ in range(self._DIGITS)]
        self.blocks: list[torch.Tensor] = []
        self.calls = self.aimed_at = self.landed = 0
        self.expected: int | None = None
        self.reach = _reach[0]
        self.large_expected: int | None = None
        self.large_aimed = self.large_landed = 0

    def offset(self, call: int) -> int:
        """The call's offset modulo LIMIT, in bytes."""
        call %= 1 << self._DIGITS
        index = 0
        for digit in range(self._DIGITS):
            flip = self.flips[digit].setdefault(call & ((1 << digit) - 1), self.rng.randrange(2))
            index |= ((call >> digit & 1) ^ flip) << digit
        return (index + self.shift) % (1 << self._DIGITS) * self.STEP

    def take(self) -> None:
        """Blocks up to the call's offset: a first one of STEP bytes says where the small pool's
        next block starts; a second fills the rest of the way, and the call's first small block
        comes after it. Where the first lands in a gap of its own size, the second is taken from
        where it lands, once more."""
        if self.device is None:  # no caching allocator to move (the CPU)
            return
        target = self.offset(self.calls)
        self.calls += 1
        if self.reach:
            size = _SMALL + self.STEP + self.rng.randrange(self.reach // _ALIGN) * _ALIGN
            large = torch.empty(size, dtype=torch.uint8, device=self.device)
            self.blocks.append(large)
            self.large_expected = large.data_ptr() + large.nbytes
        block = torch.empty(self.STEP, dtype=torch.uint8, device=self.device)
        self.blocks.append(block)
        for _ in range(2):
            end = block.data_ptr() + block.nbytes
            pad = (target - end) % self.LIMIT
            if not pad:
                self.expected = end
                return
            block = torch.empty(pad, dtype=torch.uint8, device=self.device)
            self.blocks.append(block)
            if block.data_ptr() == end:
                self.expected = end + pad
                return
        self.expected = None

    def saw(self, result: object) -> None:
        """Counts whether the call's first small output began where it was aimed."""
        if self.device is None:
            return
        tensors = [result] if isinstance(result, torch.Tensor) else result if isinstance(result, (tuple, list)) else []
        small = [t for t in tensors if isinstance(t, torch.Tensor) and 0 < t.nbytes <= _SMALL]
        if small and self.expected is not None:
            self.aimed_at += 1
            self.landed += any(t.data_ptr() == self.expected for t in small)
        large = [t for t in tensors if isinstance(t, torch.Tensor) and t.nbytes > _SMALL]
        if large and self.large_expected is not None:
            hit = any(t.data_ptr() == self.large_expected for t in large)
            self.large_aimed, self.large_landed = self.large_aimed + 1, self.large_landed + hit
            landing["aimed"], landing["landed"] = landing["aimed"] + 1, landing["landed"] + hit


def _aligned(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN


def lent_pool_bytes(sets: int, one: Sequence[torch.Tensor], free: int) -> int:
    """The size of a pool the judge lends the worker for chunks of `sets` sets like `one`: room
    for them twice over (their places then vary, as in Scatter._grow), POOL_BYTES at least, within
    MAX_POOL_BYTES and the device's free memory (less _SPARE), but never less than they need once."""
    need = sets * (sum(_aligned(t.nbytes) for t in one) + _SHIFT)
    return max(need, min(max(2 * need, POOL_BYTES), MAX_POOL_BYTES, free - _SPARE))


class Scatter:
    """A pool of device memory, allocated on first use, and the copying of sets into it."""

    def __init__(
        self,
        device: torch.device,
        pool_bytes: int = POOL_BYTES,
        max_bytes: int = MAX_POOL_BYTES,
        pool: torch.Tensor | None = None,
    ) -> None:
        """`pool`: memory of a fixed size to place into (the worker's pool, which the judge lends
        it): never grown, and a set that cannot be placed there is an error, not left as drawn."""
        self.device, self.pool_bytes, self.max_bytes = device, pool_bytes, max_bytes
        self.pool: torch.Tensor | None = pool
        self.fixed = pool is not None
        if pool is not None:
            self.pool_bytes = self.max_bytes = pool.numel()
        self.rng = random.Random()  # seeded from the OS: no other process can tell the places
        self.note = "nothing placed yet"  # what the last place() did, for the time stage's log
        self.starts: list[int] = []  # where the last place() put each set, bytes into the pool

    def place(self, sets: Sequence[Sequence[torch.Tensor]], at: Sequence[int] = ()) -> list[list[torch.Tensor]]:
        """`sets`, each copied to a random place of the pool where they fit apart (no two sets
        share a byte), or to the places `at` (another Scatter's `starts` for the same sets) where
        every one fits this pool; sets that are strided, not on the device or too many or too
        large to fit apart are returned as drawn (an error in a fixed pool: the worker sees
        nothing else)."""
        self.starts = []
        as_drawn = [list(s) for s in sets]
        self.note = "inputs where drawn"
        if not sets:
            return as_drawn
        tensors = [t for s in sets for t in s]
        if not all(isinstance(t, torch.Tensor) and t.device == self.device and t.is_contiguous() for t in tensors):
            return self._as_drawn(as_drawn, "not all contiguous on the device")
        size = max(sum(_aligned(t.nbytes) for t in s) for s in sets)
        slot = size + _SHIFT
        if not size:
            return as_drawn
        if self.pool_bytes // slot < len(sets) and not self.fixed:
            self._grow(len(sets) * slot)
        slots = self.pool_bytes // slot
        if slots < len(sets):
            return self._as_drawn(
                as_drawn, f"{len(sets)} sets of {size / 2**20:.1f} MiB do not fit apart in {self.pool_bytes >> 20} MiB"
            )
        self.note = f"inputs at random places of a {self.pool_bytes >> 20} MiB pool"
        if self.pool is None:
            self.pool = torch.empty(self.pool_bytes, dtype=torch.uint8, device=self.device)
        placed = []
        if len(at) == len(sets) and all(start >= 0 and start + size <= self.pool_bytes for start in at):
            starts = list(at)
            self.note += ", the same places as the judge's"
        else:
            picked = self.rng.sample(range(slots), len(sets))
            starts = [i * slot + self.rng.randrange(_SHIFT // _ALIGN) * _ALIGN for i in picked]
        self.starts = starts
        for one, offset in zip(sets, starts):
            views = []
            for t in one:
                view = self.pool[offset : offset + t.nbytes].view(t.dtype).view(t.shape)
                view.copy_(t)
                views.append(view)
                offset += _aligned(t.nbytes)
            placed.append(views)
        return placed

    def _as_drawn(self, as_drawn: list[list[torch.Tensor]], why: str) -> list[list[torch.Tensor]]:
        if self.fixed:
            raise RuntimeError(f"the timed inputs cannot be placed in the worker's lent pool: {why}")
        self.note += f" ({why})"
        return as_drawn

    def _grow(self, least: int) -> None:
        """A larger pool in place of the current one: room for twice the chunk's sets (`least`
        bytes hold them once), so that their places still vary, within max_bytes and the memory
        the device has free (a chunk of large sets did not fit apart in POOL_BYTES:
        bench/results/2026-12-02.md, session 14). Views of the old pool keep it alive until they
        are let go, so it is not counted as free."""
        nbytes = min(2 * least, self.max_bytes)
        if nbytes < least:
            return
        if self.device.type == "cuda":  # ROCm's too
            free, _ = torch.cuda.mem_get_info(self.device)
            cached = torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)
            if nbytes > free + cached - _SPARE:
                return
        self.pool, self.pool_bytes = None, nbytes

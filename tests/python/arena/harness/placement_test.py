import pytest
import torch

from arena.harness.placement import POOL_BYTES, Scatter, lent_pool_bytes
from arena_testing.gpu import needs_gpu


def _sets(count: int, n: int = 1000) -> list[list[torch.Tensor]]:
    return [
        [torch.randn(n), torch.arange(n // 3, dtype=torch.int64).reshape(-1, 1), torch.ones(7) > 0]
        for _ in range(count)
    ]


def test_every_set_is_copied_whole_to_its_own_bytes_of_the_pool():
    scatter = Scatter(torch.device("cpu"), pool_bytes=64 << 20)
    drawn = _sets(8)
    placed = scatter.place(drawn)
    assert scatter.pool is not None
    base = scatter.pool.data_ptr()
    spans = []
    for got, want in zip(placed, drawn):
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape and torch.equal(g, w)
            assert base <= g.data_ptr() < base + (64 << 20) and (g.data_ptr() - base) % 4096 == 0
            spans.append((g.data_ptr(), g.data_ptr() + g.nbytes))
    spans.sort()
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:])), "two tensors share bytes"


def test_each_draw_lands_somewhere_else():
    scatter = Scatter(torch.device("cpu"), pool_bytes=256 << 20)
    first = {scatter.place(_sets(1))[0][0].data_ptr() for _ in range(20)}
    assert len(first) >= 15  # 113 slots and 512 shifts each: repeats are rare


def test_large_strided_or_crowded_sets_stay_where_they_were_drawn():
    scatter = Scatter(torch.device("cpu"), pool_bytes=16 << 20, max_bytes=16 << 20)
    strided = [[torch.randn(8, 8).t()]]
    assert scatter.place(strided)[0][0] is strided[0][0]
    crowded = _sets(40, n=100_000)  # 40 slots of 0.6 MiB and a 2 MiB shift do not fit in 16 MiB
    assert all(g is w for g, w in zip(scatter.place(crowded)[0], crowded[0]))
    assert scatter.pool is None  # nothing placed, nothing allocated
    assert "40 sets of 0.6 MiB do not fit apart in 16 MiB" in scatter.note


def test_the_pool_grows_to_twice_a_chunk_that_does_not_fit_within_its_limit():
    # 32 argmax sets of 62.6 MiB did not fit apart in 2 GiB and were timed where drawn.
    scatter = Scatter(torch.device("cpu"), pool_bytes=16 << 20, max_bytes=1 << 30)
    crowded = _sets(40, n=100_000)  # 40 slots of 2.6 MiB: 104 MiB, twice that 208 MiB
    placed = scatter.place(crowded)
    assert scatter.pool is not None and scatter.pool_bytes == scatter.pool.nbytes
    slot = scatter.pool_bytes // 80
    assert 2 << 20 < slot < 3 << 20 and f"random places of a {scatter.pool_bytes >> 20} MiB pool" in scatter.note
    assert all(torch.equal(g, w) for got, want in zip(placed, crowded) for g, w in zip(got, want))
    assert len({got[0].data_ptr() for got in placed}) == 40
    tight = Scatter(torch.device("cpu"), pool_bytes=16 << 20, max_bytes=150 << 20)
    tight.place(crowded)  # twice is over the limit, once is not: as large as the limit allows
    assert tight.pool_bytes == 150 << 20 and "random places" in tight.note
    small = Scatter(torch.device("cpu"), pool_bytes=16 << 20, max_bytes=64 << 20)
    assert all(g is w for g, w in zip(small.place(crowded)[0], crowded[0]))  # not even once
    assert small.pool_bytes == 16 << 20


def test_large_sets_are_scattered_too():
    # Large operands timed where drawn moved a GEMM's no-op by the process (bench/results/
    # 2026-12-02.md, session 13): no size is exempt, only what does not fit.
    scatter = Scatter(torch.device("cpu"), pool_bytes=1 << 30)
    huge = [[torch.arange(20 << 20, dtype=torch.int32)] for _ in range(3)]  # 80 MiB a set
    placed = scatter.place(huge)
    assert scatter.pool is not None and "random places" in scatter.note
    for got, want in zip(placed, huge):
        assert got[0] is not want[0] and torch.equal(got[0], want[0])
    assert len({got[0].data_ptr() for got in placed}) == 3


def test_a_chunks_outputs_are_held_up_to_the_hold_limit():
    from arena.harness.placement import HOLD_BYTES, Held

    large = 64 << 20
    held = Held()
    small = torch.empty(1024, dtype=torch.uint8)
    held.keep(small)
    held.keep((small, torch.empty(8)))
    big = torch.empty(large + 1, dtype=torch.uint8)
    held.keep(big)  # a large output is held too: where it lies matters to a GEMM
    held.keep(None)  # a HIP launcher's status, not an output
    pair = held.items[1]
    assert isinstance(pair, tuple) and held.items == [small, pair, big] and pair[0] is small
    assert held.nbytes == 2 * 1024 + 32 + large + 1
    while held.nbytes + large <= HOLD_BYTES:
        held.keep(torch.empty(large, dtype=torch.uint8))
    count = len(held.items)
    held.keep(torch.empty(large, dtype=torch.uint8))
    assert len(held.items) == count and held.nbytes <= HOLD_BYTES


def test_harness_outputs_get_a_new_place_every_call_while_there_is_room():
    from arena.harness.placement import HOLD_BYTES, Held

    large = 64 << 20
    held = Held()
    outputs = [torch.zeros(256, dtype=torch.int32), torch.zeros(4, dtype=torch.float16)]
    same_list, places, callers = outputs, set(), list(outputs)
    for _ in range(5):
        held.renew(outputs)
        places.add(outputs[0].data_ptr())
        assert outputs[0].shape == (256,) and outputs[1].dtype == torch.float16
    assert outputs is same_list  # the caller's `after` reads the items from this very list
    assert len(places) == 5 and len(held.items) == 6  # five calls, five places, all still allocated
    # and the caller's own buffers, held once and not counted: they were allocated before the chunk
    kept = [item for item in held.items if isinstance(item, list) and [id(t) for t in item] == [id(t) for t in callers]]
    assert len(kept) == 1
    assert held.nbytes == 5 * (256 * 4 + 4 * 2)
    big = [torch.empty(large + 1, dtype=torch.uint8)]
    first = big[0]
    held.renew(big)
    assert big[0] is not first and big[0].nbytes == large + 1  # a large one moves too
    while held.nbytes + large <= HOLD_BYTES:
        held.keep(torch.empty(large, dtype=torch.uint8))
    full = [torch.empty(large, dtype=torch.uint8)]
    before = full[0]
    held.renew(full)
    assert full[0] is before  # nothing left to hold it: the old buffer is reused
    held.renew([])  # a kernel that returns its outputs: nothing to renew


def test_the_spacers_offsets_are_stratified_in_every_aligned_run():
    from arena.harness.placement import Spacer

    spacer = Spacer(None)
    offsets = [spacer.offset(call) for call in range(256)]
    assert all(o % Spacer.STEP == 0 and 0 <= o < Spacer.LIMIT for o in offsets)
    for run in (2, 4, 8, 64, 128):
        for start in range(0, 256, run):
            residues = sorted(o // Spacer.STEP % run for o in offsets[start : start + run])
            assert residues == list(range(run)), (run, start)
    # Scrambled, not a sweep, and drawn anew for each spacer.
    assert offsets[:128] != sorted(offsets[:128])
    others = [Spacer(None) for _ in range(4)]
    assert any([other.offset(k) for k in range(128)] != offsets[:128] for other in others)


def test_the_spacer_moves_nothing_where_there_is_no_caching_allocator():
    from arena.harness.placement import Spacer

    spacer = Spacer(torch.device("cpu"))
    spacer.take()
    spacer.saw(torch.zeros(4))
    assert spacer.blocks == [] and spacer.aimed_at == 0 and spacer.expected is None


@needs_gpu  # the spacer moves the caching allocator's blocks
def test_small_outputs_after_the_spacer_start_where_aimed_half_at_each_alignment():
    from arena.harness.placement import Spacer

    spacer, held, offsets = Spacer(torch.device("cuda")), [], []
    for _ in range(64):
        spacer.take()
        held.append(torch.zeros(256, dtype=torch.int32, device="cuda"))  # a histogram's 1 KiB of counts
        spacer.saw(held[-1])
        offsets.append(held[-1].data_ptr() % Spacer.LIMIT)
    # Without the spacer, consecutive 1 KiB blocks of one segment keep one alignment (all at
    # 0 mod 1024 or all at 512): no pair has one of each. Aimed, most calls land where aimed
    # (57 and more of 64 on the H200, by the allocator's state) and most pairs have one of each.
    # A call whose padding lands in a gap twice is not aimed (63 of 64 once on an H100, session 35).
    assert spacer.aimed_at >= 60 and spacer.landed >= 48
    assert sum({o % 1024 for o in offsets[k : k + 2]} == {0, 512} for k in range(0, 64, 2)) >= 20


@needs_gpu  # the pool grows only into free device memory
def test_the_pool_grows_on_the_device_only_into_free_memory():
    device = torch.device("cuda", torch.cuda.current_device())  # as the harness names it: "cuda" alone is not "cuda:0"
    crowded = [[t.to(device) for t in one] for one in _sets(40, n=100_000)]
    scatter = Scatter(device, pool_bytes=16 << 20)
    placed = scatter.place(crowded)
    assert scatter.pool is not None and scatter.pool.nbytes > 100 << 20 and placed[0][0] is not crowded[0][0]
    free, _ = torch.cuda.mem_get_info(device)
    greedy = Scatter(device, pool_bytes=16 << 20, max_bytes=1 << 50)
    huge = [[torch.empty(free // 2 + (64 << 20), dtype=torch.uint8, device=device)]]  # twice is over what is free
    assert greedy.place(huge)[0][0] is huge[0][0] and greedy.pool is None


def test_a_lent_pool_is_used_as_given_never_grown_and_a_misfit_is_an_error():
    # The worker sees only the pool the judge lends it: its sets cannot stay where they were drawn.
    lent = torch.zeros(16 << 20, dtype=torch.uint8)
    scatter = Scatter(torch.device("cpu"), pool=lent)
    placed = scatter.place(_sets(2))
    assert all(lent.data_ptr() <= t.data_ptr() < lent.data_ptr() + lent.nbytes for one in placed for t in one)
    with pytest.raises(RuntimeError, match="do not fit apart in 16 MiB"):
        scatter.place(_sets(40, n=100_000))
    assert scatter.pool is lent and scatter.pool_bytes == 16 << 20
    with pytest.raises(RuntimeError, match="not all contiguous"):
        scatter.place([[torch.randn(8, 8).t()]])


def test_sets_go_to_another_scatters_places_where_they_all_fit():
    judge = Scatter(torch.device("cpu"), pool_bytes=64 << 20)
    drawn = _sets(6)
    judge.place(drawn)
    assert len(judge.starts) == 6 and len(set(judge.starts)) == 6
    worker = Scatter(torch.device("cpu"), pool=torch.zeros(64 << 20, dtype=torch.uint8))
    placed = worker.place(drawn, at=judge.starts)
    assert worker.pool is not None and worker.starts == judge.starts
    assert [one[0].data_ptr() - worker.pool.data_ptr() for one in placed] == judge.starts
    assert all(torch.equal(g, w) for got, want in zip(placed, drawn) for g, w in zip(got, want))
    assert "the same places as the judge's" in worker.note
    small = Scatter(torch.device("cpu"), pool=torch.zeros(16 << 20, dtype=torch.uint8))
    small.place(drawn, at=[start + (60 << 20) for start in judge.starts])  # past its end: places of its own
    assert all(start + 4096 < 16 << 20 for start in small.starts) and "same places" not in small.note


def test_a_lent_pool_holds_a_chunk_twice_when_memory_allows_and_once_at_least():
    one = [torch.empty(100 << 20, dtype=torch.uint8)]  # 100 MiB a set, 102 MiB a slot with its shift
    assert lent_pool_bytes(2, one, free=64 << 30) == POOL_BYTES  # small chunks get the usual pool
    assert lent_pool_bytes(16, one, free=64 << 30) == 2 * 16 * (102 << 20)
    assert lent_pool_bytes(16, one, free=3 << 30) == 2 << 30  # as much as leaves 1 GiB free
    assert lent_pool_bytes(16, one, free=5 << 29) == 16 * (102 << 20)  # less than once: once


def test_large_outputs_are_moved_about_as_far_as_a_call_writes_within_a_quarter_of_free_memory():
    from arena.harness.placement import large_reach

    mib, gib = 1 << 20, 1 << 30
    assert large_reach(2, 224 * mib, 80 * gib) == 224 * mib  # a 16k-token norm's two outputs
    assert large_reach(48, 2 * mib, 80 * gib) == 4 * mib  # at least 4 MiB: across a large page
    assert large_reach(2, 900 * mib, 80 * gib) == 122 * mib  # what the 2 GiB reserve has room for
    assert large_reach(48, 1 * mib, 80 * gib) == 0  # small outputs: the small pool's spacer moves them
    assert large_reach(48, 40 * mib, 80 * gib) == 0  # a chunk's outputs fill the reserve: not moved
    assert large_reach(4, 24 * mib, 6 * gib // 5) == 0  # too little free memory to reserve


@needs_gpu  # the reserve is a block of the caching allocator's large pool
def test_large_outputs_start_where_aimed_and_move_from_chunk_to_chunk():
    from arena.harness.placement import Spacer, make_room, reserve

    device = torch.device("cuda", torch.cuda.current_device())
    reserve(4, 24 << 20, device)
    starts, landed = [], 0
    for _ in range(6):  # chunks of 4 calls, each call's outputs held until its chunk ends
        plugs = make_room(device)  # as each side does before a chunk, held to its end
        spacer, held = Spacer(device), []
        assert spacer.reach == 24 << 20
        for _ in range(4):
            spacer.take()
            held.append(torch.empty(24 << 20, dtype=torch.uint8, device=device))
            spacer.saw(held[-1])
            starts.append(held[-1].data_ptr())
        assert spacer.large_aimed == 4
        landed += spacer.large_landed
        del spacer, held, plugs
    # Without the reserve and its blocks, every chunk's k-th output would reuse one block.
    assert landed >= 20 and len(set(starts)) >= 20
    assert min(starts) >= 0 and max(starts) - min(starts) < 4 * (48 + 2) << 20  # all within the reserve


@needs_gpu  # the reserve is a block of the caching allocator's large pool
def test_harness_outputs_allocated_before_a_chunk_start_where_aimed_too():
    from arena.harness.placement import Held, Spacer, make_room, reserve

    device = torch.device("cuda", torch.cuda.current_device())
    reserve(4, 24 << 20, device)
    landed = aimed = 0
    for _ in range(6):  # as lent and the worker run a HIP side: its buffers made before make_room
        outputs = [torch.empty(24 << 20, dtype=torch.uint8, device=device)]
        plugs = make_room(device)
        spacer, held = Spacer(device), Held()
        for _ in range(4):
            spacer.take()
            held.renew(outputs)
            spacer.saw(list(outputs))
        aimed, landed = aimed + spacer.large_aimed, landed + spacer.large_landed
        del spacer, held, plugs, outputs
    # Freed at each chunk's first call, the caller's buffer took the next Spacer block and that
    # call's outputs missed: about 18 of 24 landed before the buffer was held to the chunk's end.
    assert aimed == 24 and landed >= 21


@needs_gpu  # the reserve is a block of the caching allocator's large pool
def test_a_reserve_split_by_held_outputs_is_made_again_before_the_next_chunk():
    from arena.harness.placement import free_large_blocks, make_room, reserve

    device = torch.device("cuda", torch.cuda.current_device())
    torch.cuda.empty_cache()  # no free block left by earlier tests: the reserve is the only one
    reserve(2, 64 << 20, device)
    need = 2 * (64 + 64 + 2) << 20
    assert max(free_large_blocks(device)) >= need
    # Outputs held across chunks, as the worker's stale-output check holds them, split the block.
    held = [torch.empty(64 << 20, dtype=torch.uint8, device=device) for _ in range(2)]
    gaps = [torch.empty(8 << 20, dtype=torch.uint8, device=device) for _ in range(2)]
    split = [torch.empty(64 << 20, dtype=torch.uint8, device=device) for _ in range(2)]
    del gaps
    if max(free_large_blocks(device)) >= need:
        pytest.skip("the allocator held another block large enough; nothing was split")
    plugs = make_room(device)
    # A new reserve, the one free block left: every other was taken (the 16 MiB gap among them).
    assert free_large_blocks(device) == [max(free_large_blocks(device))]
    assert max(free_large_blocks(device)) >= need and any(p.nbytes == 16 << 20 for p in plugs)
    del held, split, plugs


def test_only_free_blocks_of_this_devices_default_large_pool_on_this_stream_count(monkeypatch):
    from types import SimpleNamespace

    from arena.harness import placement

    def segment(blocks, device=0, kind="large", stream=0, pool=(0, 0)):
        return {"device": device, "segment_type": kind, "stream": stream, "segment_pool_id": pool, "blocks": blocks}

    free, used = {"size": 96 << 20, "state": "inactive"}, {"size": 32 << 20, "state": "active_allocated"}
    snapshot = [
        segment([used, free, {"size": 8 << 20, "state": "inactive"}]),
        segment([{"size": 2 << 20, "state": "inactive"}], kind="small"),  # the small pool's
        segment([free], device=1),  # another device's
        segment([free], stream=7),  # another stream's: an allocation on this one cannot use it
        segment([free], pool=(1, 3)),  # a graph's private pool
        segment([{"size": 5 << 20, "state": "active_pending_free"}]),
    ]
    monkeypatch.setattr(torch.cuda, "memory_snapshot", lambda: snapshot)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: SimpleNamespace(cuda_stream=0))
    assert sorted(placement.free_large_blocks(torch.device("cuda", 0))) == [8 << 20, 96 << 20]

import pytest
import torch

from arena.harness.placement import Scatter


def _sets(count: int, n: int = 1000) -> list[list[torch.Tensor]]:
    return [[torch.randn(n), torch.arange(n // 3, dtype=torch.int64).reshape(-1, 1), torch.ones(7) > 0]
            for _ in range(count)]


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
    scatter = Scatter(torch.device("cpu"), pool_bytes=16 << 20)
    strided = [[torch.randn(8, 8).t()]]
    assert scatter.place(strided)[0][0] is strided[0][0]
    crowded = _sets(40, n=100_000)  # 40 slots of 2.4 MiB do not fit apart in 16 MiB
    assert all(g is w for g, w in zip(scatter.place(crowded)[0], crowded[0]))
    assert scatter.pool is None  # nothing placed, nothing allocated
    big = Scatter(torch.device("cpu"), pool_bytes=1 << 30)
    huge = [[torch.empty(80 << 20, dtype=torch.uint8)]]  # over SPREAD_LIMIT: spans many pages already
    assert big.place(huge)[0][0] is huge[0][0]


def test_a_chunks_small_outputs_are_held_and_large_ones_are_not():
    from arena.harness.placement import HOLD_BYTES, SPREAD_LIMIT, Held

    held = Held()
    small = torch.empty(1024, dtype=torch.uint8)
    held.keep(small)
    held.keep((small, torch.empty(8)))
    held.keep(torch.empty(SPREAD_LIMIT + 1, dtype=torch.uint8))  # spans many pages already
    held.keep(None)  # a HIP launcher's status, not an output
    pair = held.items[1]
    assert isinstance(pair, tuple) and held.items == [small, pair] and pair[0] is small
    assert held.nbytes == 2 * 1024 + 32
    while held.nbytes + SPREAD_LIMIT <= HOLD_BYTES:
        held.keep(torch.empty(SPREAD_LIMIT, dtype=torch.uint8))
    count = len(held.items)
    held.keep(torch.empty(SPREAD_LIMIT, dtype=torch.uint8))
    assert len(held.items) == count and held.nbytes <= HOLD_BYTES


def test_harness_outputs_get_a_new_place_every_call_while_small():
    from arena.harness.placement import HOLD_BYTES, SPREAD_LIMIT, Held

    held = Held()
    outputs = [torch.zeros(256, dtype=torch.int32), torch.zeros(4, dtype=torch.float16)]
    same_list, places = outputs, set()
    for _ in range(5):
        held.renew(outputs)
        places.add(outputs[0].data_ptr())
        assert outputs[0].shape == (256,) and outputs[1].dtype == torch.float16
    assert outputs is same_list  # the caller's `after` reads the items from this very list
    assert len(places) == 5 and len(held.items) == 5  # five calls, five places, all still allocated
    large = [torch.empty(SPREAD_LIMIT + 1, dtype=torch.uint8)]
    first = large[0]
    held.renew(large)
    assert large[0] is first  # a large output already spans many pages: kept where it is
    while held.nbytes + SPREAD_LIMIT <= HOLD_BYTES:
        held.keep(torch.empty(SPREAD_LIMIT, dtype=torch.uint8))
    full = [torch.empty(SPREAD_LIMIT, dtype=torch.uint8)]
    before = full[0]
    held.renew(full)
    assert full[0] is before  # nothing left to hold it: the old buffer is reused
    held.renew([])  # a kernel that returns its outputs: nothing to renew


def test_the_spacer_moves_nothing_where_there_is_no_caching_allocator():
    from arena.harness.placement import Spacer

    assert Spacer(torch.device("cpu")).take() is None and Spacer(None).take() is None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: the spacer moves the caching allocator's blocks")
def test_small_outputs_after_a_spacer_start_at_many_offsets():
    from arena.harness.placement import Spacer

    spacer, held, offsets = Spacer(torch.device("cuda")), [], set()
    for _ in range(64):
        gap = spacer.take()
        held.append(torch.zeros(256, dtype=torch.int32, device="cuda"))  # a histogram's 1 KiB of counts
        offsets.add(held[-1].data_ptr() % Spacer.LIMIT)
        del gap
    # Without the spacer, consecutive 1 KiB blocks of one segment keep one alignment (all at
    # 0 mod 1024 or all at 512); with it, both alignments and many offsets are seen.
    assert len(offsets) > 16 and {o % 1024 for o in offsets} == {0, 512}

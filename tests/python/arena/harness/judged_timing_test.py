"""The judge's slot layout on the CPU (the GPU path itself: cheat_judge_gpu_test.py and bench/)."""

import torch

from arena.harness import judged_timing
from arena.harness.shared_gpu import typed_view


def test_every_slot_of_an_output_is_one_strided_view():
    outputs = [torch.empty(3, 5, dtype=torch.float32), torch.empty(7, dtype=torch.int64)]
    layout = judged_timing._Layout.of(outputs, 4)
    data = torch.zeros(layout.nbytes(), dtype=torch.uint8)
    slots = [[typed_view(data, p) for p in row] for row in layout.outputs]
    for k, (a, b) in enumerate(slots):
        a.fill_(k + 0.5)
        b.fill_(-k)
    assert all(p["offset"] % 256 == 0 for row in layout.outputs for p in row)
    first = judged_timing._stacked(data, layout.outputs, 0, 0, 4)
    assert first.shape == (4, 15) and torch.equal(first[:, 0], torch.tensor([0.5, 1.5, 2.5, 3.5]))
    second = judged_timing._stacked(data, layout.outputs, 1, 1, 3)
    assert second.shape == (3, 7) and torch.equal(second[:, 3], torch.tensor([-1, -2, -3]))


def test_a_single_slot_stacks_too():
    layout = judged_timing._Layout.of([torch.empty(10, dtype=torch.float16)], 1)
    data = torch.zeros(layout.nbytes(), dtype=torch.uint8)
    typed_view(data, layout.outputs[0][0]).fill_(2.0)
    assert torch.equal(judged_timing._stacked(data, layout.outputs, 0, 0, 1), torch.full((1, 10), 2.0, dtype=torch.float16))


def test_the_bound_counts_samples_around_their_median():
    honest = [10.0] * 98 + [12.0, 14.0]
    assert judged_timing._claimed(honest, 1.0) == sum(t - 1.0 for t in honest)  # nothing capped
    # About the same sum with a median of 1 us: these samples no longer explain the judge's clock.
    forged = [1.0] * 90 + [91.6] * 10
    assert abs(sum(forged) - sum(honest)) < 1.0
    assert judged_timing._claimed(forged, 0.0) < 0.2 * sum(forged)

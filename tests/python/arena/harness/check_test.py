import math

import pytest
import torch

from arena.harness.check import (
    changed_in_calls,
    changed_inputs,
    check_output_type,
    find_mismatch,
    mismatch_mask,
    poison_,
    same_bits,
    split_outputs,
)
from arena.task.task import Tolerance

TOL = Tolerance(atol=1e-5, rtol=1e-5)


def test_values_within_tolerance_pass_and_the_first_mismatch_is_reported():
    want = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert find_mismatch("z", want + 5e-6, want, TOL) is None
    got = want.clone()
    got[1, 0] = 3.5
    message = find_mismatch("z", got, want, TOL)
    assert message is not None and "1 of 4" in message and "[1, 0]" in message and "got 3.5, want 3.0" in message


@pytest.mark.parametrize(
    "got, want, bad",
    [
        (math.nan, math.nan, False),
        (math.nan, 1.0, True),
        (1.0, math.nan, True),
        (math.inf, math.inf, False),
        (-math.inf, math.inf, True),
        (math.inf, 1e30, True),
        (1e30, math.inf, True),
    ],
)
def test_nan_and_inf_policy(got, want, bad):
    assert bool(mismatch_mask(torch.tensor([got]), torch.tensor([want]), TOL)[0]) is bad


def test_integers_must_match_exactly():
    want = torch.tensor([1, 2, 3], dtype=torch.int32)
    assert find_mismatch("i", want.clone(), want, Tolerance(0, 0)) is None
    assert find_mismatch("i", want + 1, want, Tolerance(10, 10)) is not None


def test_output_type_rules():
    want = torch.zeros(4, 2)
    assert check_output_type("z", torch.zeros(4, 2), want) is None
    assert "plain torch.Tensor" in (check_output_type("z", torch.nn.Parameter(torch.zeros(4, 2)), want) or "")
    assert "plain torch.Tensor" in (check_output_type("z", [0.0] * 8, want) or "")
    assert "contiguous" in (check_output_type("z", torch.zeros(2, 4).t(), want) or "")
    assert "dtype" in (check_output_type("z", torch.zeros(4, 2, dtype=torch.float64), want) or "")
    assert "shape" in (check_output_type("z", torch.zeros(8), want) or "")


def test_poison_and_bits():
    floats, ints = torch.zeros(3), torch.zeros(3, dtype=torch.int16)
    poison_(floats)
    poison_(ints)
    assert torch.isnan(floats).all() and (ints == 0x5A5A).all()
    assert same_bits(floats, floats.clone()) and not same_bits(torch.zeros(3), torch.zeros(3) + 1e-30)
    changed = changed_inputs(["a", "b"], [torch.ones(2), torch.ones(2)], [torch.ones(2), torch.zeros(2)])
    assert "input b" in (changed or "")


def test_a_chunks_calls_are_compared_with_their_sets_as_drawn():
    drawn = [[torch.ones(2), torch.zeros(2)] for _ in range(3)]
    calls = [[t.clone() for t in one] for one in drawn]
    assert changed_in_calls(["x", "y"], calls, drawn) is None
    calls[2][1][0] = float("nan")
    assert changed_in_calls(["x", "y"], calls, drawn) == (
        "call 2 of a chunk: input y was modified by the call (inputs are read-only)"
    )
    assert changed_in_calls(["x", "y"], calls, drawn, writable=["y"]) is None  # written in place


def test_split_outputs():
    t = torch.zeros(1)
    assert split_outputs(t, 1) == (t,)
    assert split_outputs((t, t), 2) == (t, t)
    assert isinstance(split_outputs((t,), 2), str)


def test_stale_output_sees_inputs_views_slices_and_held_outputs():
    from arena.harness.check import shares_storage, stale_output

    x, y = torch.zeros(16), torch.zeros(16)
    held = torch.ones(16)
    assert shares_storage(x, x[4:8]) and shares_storage(x[4:8], x) and not shares_storage(x, y)
    assert shares_storage(x[0:4], x[8:12])  # two views of one storage: the same memory block
    assert "input 1's" in str(stale_output("z", y.view(4, 4), [x, y], []))
    assert "earlier call's output" in str(stale_output("z", held, [x, y], [held]))
    assert stale_output("z", torch.empty(16), [x, y], [held]) is None  # fresh memory passes

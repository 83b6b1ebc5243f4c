import pytest
import torch

from arena.harness.inputs import derive_seed, hidden_cases, make_inputs, make_scalars
from arena.task.task import Case, Distribution, TensorSpec
from arena_testing.harness_tasks import build_task

CPU = torch.device("cpu")


def test_inputs_are_reproducible_and_seed_dependent(tmp_path):
    task = build_task(tmp_path)
    case = task.cases[0]
    a, b = make_inputs(task, case, CPU), make_inputs(task, case, CPU)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    other = make_inputs(task, hidden_cases(case, 7, 1)[0], CPU)
    assert not torch.equal(a[0], other[0])
    assert a[0].shape == (129,) and a[0].dtype == torch.float32 and a[0].is_contiguous()


def test_hidden_cases_depend_on_the_secret():
    case = Case("c", {"N": 4}, "float32", 1, timed=True)
    first, second = hidden_cases(case, 1, 2), hidden_cases(case, 2, 2)
    assert [c.name for c in first] == ["c~hidden0", "c~hidden1"]
    assert not any(c.timed for c in first)
    assert first[0].seed != second[0].seed != case.seed
    assert derive_seed(1, "c", 0) == derive_seed(1, "c", 0) < 2**63


def test_every_distribution_kind(tmp_path):
    from dataclasses import replace

    task = build_task(tmp_path)
    dists = {
        "normal": Distribution("normal", {"mean": 5.0, "std": 0.1}),
        "uniform": Distribution("uniform", {"low": 2.0, "high": 3.0}),
        "randint": Distribution("randint", {"low": 0, "high": "N"}),
        "wide": Distribution("wide", {"low": -2, "high": 2}),
        "large": Distribution("large", {"scale": 1e4}),
        "constant": Distribution("constant", {"value": 1.5}),
    }
    for kind, dist in dists.items():
        case = Case("c", {"N": 5000}, "float32", 3, dists={"x": dist})
        x = make_inputs(task, case, CPU)[0]
        if kind == "normal":
            assert abs(float(x.mean()) - 5.0) < 0.01
        elif kind == "uniform":
            assert float(x.min()) >= 2.0 and float(x.max()) <= 3.0
        elif kind == "randint":
            assert float(x.min()) >= 0 and float(x.max()) < 5000 and torch.equal(x, x.round())
        elif kind == "wide":
            assert float(x.abs().min()) >= 0.01 and float(x.abs().max()) <= 100 and (x < 0).any()
        elif kind == "large":
            assert float(x.abs().max()) > 1e4
        else:
            assert (x == 1.5).all()
    int_task = replace(
        task, inputs=(TensorSpec("x", ("N",), "int32", Distribution("randint", {"low": -3, "high": 3})),)
    )
    x = make_inputs(int_task, Case("c", {"N": 100}, "float32", 1), CPU)[0]
    assert x.dtype == torch.int32 and int(x.min()) >= -3 and int(x.max()) < 3


def test_a_permutation_draws_distinct_values_in_its_range_and_an_arange_counts(tmp_path):
    from dataclasses import replace

    task = replace(
        build_task(tmp_path),
        inputs=(
            TensorSpec("slots", ("T",), "int64", Distribution("permutation", {"low": 3, "high": "S"})),
            TensorSpec("ramp", ("T",), "float32", Distribution("arange", {"start": 1.5, "step": -2})),
        ),
    )
    case = Case("c", {"T": 900, "S": 1000}, "float32", 4)
    slots, ramp = make_inputs(task, case, CPU)
    assert slots.dtype == torch.int64 and len(set(slots.tolist())) == 900
    assert int(slots.min()) >= 3 and int(slots.max()) < 1000
    assert torch.equal(slots, make_inputs(task, case, CPU)[0])
    assert not torch.equal(slots, make_inputs(task, replace(case, seed=5), CPU)[0])
    assert ramp.tolist()[:3] == [1.5, -0.5, -2.5] and float(ramp[-1]) == 1.5 - 2 * 899
    with pytest.raises(ValueError, match="fewer than 900 distinct values"):
        make_inputs(task, replace(case, dims={"T": 900, "S": 800}), CPU)


def test_scalars_take_dims_by_name(tmp_path):
    from dataclasses import replace

    task = replace(build_task(tmp_path), scalars={"n": "N", "alpha": 0.5})
    assert make_scalars(task, task.cases[0]) == {"n": 129, "alpha": 0.5}


def test_a_half_normal_draws_magnitudes_of_the_seeds_normal(tmp_path):
    from dataclasses import replace

    dist = Distribution("half_normal", {"std": 0.1, "low": 0.01})
    task = replace(build_task(tmp_path), inputs=(TensorSpec("x", ("N",), "float32", dist),))
    case = Case("c", {"N": 20000}, "float32", 3)
    x = make_inputs(task, case, CPU)[0]
    assert float(x.min()) >= 0.01 and abs(float(x.mean()) - (0.01 + 0.1 * (2 / torch.pi) ** 0.5)) < 0.002
    # The declared meaning: |N(0, std)| + low, drawn as the seed's normal draw.
    normal = replace(task, inputs=(TensorSpec("x", ("N",), "float32", Distribution("normal", {"std": 0.1})),))
    assert torch.allclose(x, make_inputs(normal, case, CPU)[0].abs() + 0.01)
    assert torch.equal(x, make_inputs(task, case, CPU)[0])
    assert not torch.equal(x, make_inputs(task, replace(case, seed=4), CPU)[0])


def test_a_cumsum_sums_its_base_draw_along_its_dim(tmp_path):
    from dataclasses import replace

    def draw(dist: Distribution, dtype: str = "float32", seed: int = 3) -> torch.Tensor:
        task = replace(build_task(tmp_path), inputs=(TensorSpec("x", ("B", "T", "H"), dtype, dist),))
        return make_inputs(task, Case("c", {"B": 2, "T": 300, "H": 3}, "float32", seed), CPU)[0]

    base = Distribution("normal", {"std": 0.01})
    x = draw(Distribution("cumsum", {"base": "normal", "dim": 1, "std": 0.01}))
    assert torch.allclose(x, draw(base).cumsum(1))
    assert torch.equal(x, draw(Distribution("cumsum", {"base": "normal", "dim": -2, "std": 0.01})))
    assert not torch.equal(x, draw(Distribution("cumsum", {"base": "normal", "dim": 1, "std": 0.01}), seed=4))
    decreasing = draw(Distribution("cumsum", {"base": "uniform", "dim": -1, "low": -0.01, "high": 0.0}))
    assert (decreasing.diff(dim=-1) <= 0).all() and float(decreasing[..., 0].min()) >= -0.01
    offsets = draw(Distribution("cumsum", {"base": "randint", "dim": 1, "low": 1, "high": 5}), "int32")
    steps = offsets.diff(dim=1)
    assert offsets.dtype == torch.int32 and int(steps.min()) >= 1 and int(steps.max()) <= 4
    ramp = draw(Distribution("cumsum", {"base": "constant", "dim": 0, "value": 2.0}))
    assert ramp[:, 0, 0].tolist() == [2.0, 4.0]


def test_a_tril_keeps_its_base_draw_on_and_below_the_diagonal_of_each_block(tmp_path):
    from dataclasses import replace

    def draw(dist: Distribution, shape: tuple, dims: dict, seed: int = 3) -> torch.Tensor:
        task = replace(build_task(tmp_path), inputs=(TensorSpec("x", shape, "float32", dist),))
        return make_inputs(task, Case("c", dims, "float32", seed), CPU)[0]

    # FLA's chunked matrices: A[B, T, H, BT], strictly lower triangular within each BT x BT block.
    shape, dims = ("B", "T", "H", "BT"), {"B": 2, "T": 64, "H": 3, "BT": 16}
    a = draw(Distribution("tril", {"base": "normal", "rows": 1, "cols": -1, "diagonal": -1, "std": 0.1}), shape, dims)
    full = draw(Distribution("normal", {"std": 0.1}), shape, dims)
    t = torch.arange(64) % 16
    mask = t[:, None] > torch.arange(16)[None, :]  # the test's own mask
    assert torch.equal(a, full * mask[None, :, None, :])
    assert not torch.equal(
        a,
        draw(
            Distribution("tril", {"base": "normal", "rows": 1, "cols": 3, "diagonal": -1, "std": 0.1}), shape, dims, 4
        ),
    )
    # A square matrix is torch.tril of the draw; rows after cols is the transposed triangle.
    square = draw(Distribution("tril", {"base": "uniform", "rows": 0, "cols": 1}), ("N", "N"), {"N": 9})
    assert torch.equal(square, torch.tril(draw(Distribution("uniform", {}), ("N", "N"), {"N": 9})))
    upper = draw(Distribution("tril", {"base": "uniform", "rows": 1, "cols": 0, "diagonal": 1}), ("N", "N"), {"N": 9})
    assert torch.equal(upper, torch.triu(draw(Distribution("uniform", {}), ("N", "N"), {"N": 9}), -1))

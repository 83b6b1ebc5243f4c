"""Checks c (a tolerance loose enough for a lower-precision kernel) and d (a baseline that differs
from its reference on an undeclared case), planted in small add tasks and run by the fast tier's
real child; and the lowered reference itself, in this process."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import torch

from arena.harness.inputs import make_inputs
from arena.task.load import load_task
from arena.validation.fast import check_tasks_fast
from arena.validation.precision import RoundIntermediates
from arena.validation.variants import free_dims, hidden_variants
from arena_testing.add_task import ADD_FIELDS, ADD_FILES, write_add_task

ADD = "tasks/triton2triton/add"
KERNEL = ADD_FILES["kernel.py"]
ODD_CASES = [dict(ADD_FIELDS["cases"][0], dims={"N": 1001}), ADD_FIELDS["cases"][1]]


def _plant(root: Path, name: str, files: dict[str, str], **fields: Any) -> str:
    """tasks/triton2triton/<name>: the add task with `files` replaced and `fields` overridden."""
    overrides: dict[str, Any] = {**ADD_FIELDS, "name": name, **fields}
    write_add_task(root / "scratch", None, **overrides)
    folder = root / "tasks" / "triton2triton" / name
    shutil.copytree(root / "scratch" / ADD, folder)
    for relative, text in files.items():
        (folder / relative).write_text(text)
    return f"tasks/triton2triton/{name}"


def _first_x(root: Path, address: str, reseeded: bool) -> float:
    """x[0] of the task's small case, as declared or as the hidden-case check redraws it."""
    task = load_task(root, address)
    case = task.cases[0]
    if reseeded:
        case = hidden_variants(task, case)[-1]
    return float(make_inputs(task, case, torch.device("cpu"))[0][0])


def test_loose_tolerances_and_undeclared_case_bugs_are_caught_and_a_good_task_passes(tmp_path: Path) -> None:
    (tmp_path / "pants.toml").write_text("[GLOBAL]\n")
    good = _plant(tmp_path, "good", {}, cases=ODD_CASES)
    loose = _plant(tmp_path, "loose", {}, tolerances={"float32": {"atol": 1e-2, "rtol": 1e-2}})
    # Loosened, but a float32 kernel that reads its inputs as bfloat16 still fails it.
    justified = _plant(tmp_path, "justified", {}, tolerances={"float32": {"atol": 1e-4}})
    # Written for the declared length: elements past 1001 are never stored.
    sized = _plant(
        tmp_path, "sized", {"kernel.py": KERNEL.replace("n = x.numel()", "n = min(x.numel(), 1001)")}, cases=ODD_CASES
    )
    # Correct on the declared draw only (its first element), off by one on any other.
    declared = _first_x(tmp_path, _plant(tmp_path, "seeded", {}), reseeded=False)
    assert declared != _first_x(tmp_path, "tasks/triton2triton/seeded", reseeded=True)
    overfit = KERNEL.replace(
        "    return z\n", f"    if float(x[0]) != {declared!r}:\n        z[0] += 1\n    return z\n"
    )
    (tmp_path / "tasks/triton2triton/seeded/kernel.py").write_text(overfit)
    seeded = "tasks/triton2triton/seeded"

    found = check_tasks_fast(tmp_path, [good, loose, justified, sized, seeded])
    failures = {address: "\n".join(f.failures) for address, f in found.items()}
    assert failures[good] == "" and failures[justified] == ""
    assert "baseline matches the reference on undeclared case(s) 'small~N=1003'" in found[good].passed
    assert "the float32 tolerance (atol 1e-05, rtol 1e-05)" not in "\n".join(found[good].passed)  # the default
    assert "the float32 tolerance (atol 0.0001, rtol 1e-05) refuses a lower-precision reference on case 'small'" in (
        found[justified].passed
    )
    assert failures[loose].startswith(
        "the float32 tolerance (atol 0.01, rtol 0.01) accepts a lower-precision reference on every case where "
        "the default tolerance refuses it ('small')"
    )
    assert failures[sized].startswith("baseline differs from the reference on an undeclared case, 'small~N=1003'")
    assert "'small~reseeded'" in "\n".join(found[sized].passed)  # the declared size, a new seed: correct
    assert failures[seeded].startswith("baseline differs from the reference on an undeclared case, 'small~reseeded'")
    assert all("baseline correct on case 'small'" in found[a].passed for a in (sized, seeded))  # as declared: fine


def test_variants_move_only_dims_some_untimed_case_sets_odd(tmp_path: Path) -> None:
    write_add_task(tmp_path, cases=ODD_CASES)
    task = load_task(tmp_path, ADD)
    assert free_dims(task) == {"N"}
    moved, reseeded = hidden_variants(task, task.cases[0])
    assert moved.dims == {"N": 1003} and reseeded.dims == {"N": 1001} and moved.seed == reseeded.seed
    assert moved.seed not in {case.seed for case in task.cases} and not moved.timed
    write_add_task(tmp_path)  # N=1000 and 1<<18: no free dim, a new seed only
    task = load_task(tmp_path, ADD)
    assert free_dims(task) == set() and [v.name for v in hidden_variants(task, task.cases[0])] == ["small~reseeded"]


def test_a_variant_keeps_the_sizes_a_permutation_could_not_fill(tmp_path: Path) -> None:
    import dataclasses

    from arena.task.task import Distribution

    write_add_task(tmp_path, cases=ODD_CASES)
    task = load_task(tmp_path, ADD)
    x = dataclasses.replace(task.inputs[0], dtype="int64", dist=Distribution("permutation", {"low": 0, "high": 1002}))
    task = dataclasses.replace(task, inputs=(x, *task.inputs[1:]))
    assert [v.dims for v in hidden_variants(task, task.cases[0])] == [{"N": 1001}]  # 1003 > 1002 values
    x = dataclasses.replace(x, dist=Distribution("permutation", {"low": 0, "high": 1003}))
    task = dataclasses.replace(task, inputs=(x, *task.inputs[1:]))
    assert [v.dims for v in hidden_variants(task, task.cases[0])] == [{"N": 1003}, {"N": 1001}]


def test_the_lowered_reference_accumulates_in_the_case_dtype() -> None:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(8, 4096, generator=generator).half()
    w = torch.randn(4096, 32, generator=generator).half()
    exact = x.double() @ w.double()
    with RoundIntermediates(torch.float16):
        product = x.float() @ w.float()
        mean = x.float().pow(2).mean(dim=-1, keepdim=True)
        scaled = x.float() * 1.0001
    assert product.dtype == torch.float32 and mean.shape == (8, 1)
    full = (x.float() @ w.float()).double()
    assert (product.double() - exact).abs().max() > 4 * (full - exact).abs().max()  # float16 running totals
    assert torch.equal(scaled, scaled.half().float())  # rounded to float16, kept float32
    assert torch.allclose(mean.double().squeeze(1), x.double().pow(2).mean(-1), rtol=1e-2)

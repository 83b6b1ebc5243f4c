"""The geak_eval layout (arena.importer.harness): the fixture's fake_append harness lists dict
cases built by a comprehension, draws its inputs in a helper, seeds in another, and takes its
tolerance from argparse; the task declares the same cases, draws, seeds and tolerance, and its
reference computes what the harness compares. And the reasons a harness is not imported."""

from __future__ import annotations

from pathlib import Path

import torch

from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena.task.task import Distribution
from arena.task.tolerance import tolerance_for
from arena_testing.aka_refusal import refusal
from arena_testing.modules import load_module

APPEND_TASK = "triton2triton/geak_eval/L1/fake_append"
APPEND_ADDRESS = f"tasks/{APPEND_TASK}:fake_append"
HARNESS = Path("tasks") / APPEND_TASK / "test_kernel_harness.py"


def _edit(checkout: Path, old: str, new: str) -> None:
    path = checkout / HARNESS
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _reason(checkout: Path) -> str:
    return refusal(checkout, APPEND_TASK)


def test_the_harness_cases_draws_and_tolerance_are_declared(checkout: Path, tmp_path: Path) -> None:
    here = Path.cwd()
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[APPEND_TASK].address == APPEND_ADDRESS
    assert Path.cwd() == here  # the harness's os.chdir (and its canary raise) never ran
    task = load_task(out, APPEND_ADDRESS)
    assert str(task.entry) == "kernel.py:append_columns"
    assert [(t.name, t.shape, t.dtype, t.dist) for t in task.inputs] == [
        ("ids", ("M", "K"), "int32", Distribution("randint", {"low": 0, "high": "N"})),
        ("weights", ("M", "K"), "float32", Distribution("uniform", {})),
    ]
    assert [(t.name, t.shape, t.dtype) for t in task.outputs] == [
        ("out_ids", ("M", 3), "int32"),
        ("out_weights", ("M", 3), "float32"),
    ]
    # cfg["S"], cfg["fill"] and first=cfg["N"]: the case's keys as dims and numbers.
    assert task.scalars == {"extra": "S", "fill": 1.0, "first": "N"}
    # One case per ALL_CONFIGS entry (the comprehension over _ROWS), seeded as set_seed(42 + idx).
    assert [(c.name, dict(c.dims), c.seed, c.timed) for c in task.cases] == [
        ("shape1", {"N": 8, "M": 1, "K": 2, "S": 1}, 42, False),
        ("shape2", {"N": 8, "M": 4, "K": 2, "S": 1}, 43, True),
        ("shape3", {"N": 8, "M": 32, "K": 2, "S": 1}, 44, True),
    ]
    # atol: main() passes args.atol, whose argparse default is 1e-6 (not run_correctness's 1e-3).
    assert tolerance_for(task, "float32").atol == 1e-6 and tolerance_for(task, "float32").rtol == 1e-5


def test_the_reference_computes_what_the_harness_compares(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    folder = out / "tasks" / APPEND_TASK
    reference = load_module(folder / "reference.py")
    kernel = load_module(folder / "kernel.py")
    ids = torch.randint(0, 8, (5, 2), dtype=torch.int32)
    weights = torch.rand(5, 2)
    got_ids, got_weights = kernel.append_columns(ids, weights, 1, 1.0, first=8)
    want_ids, want_weights = reference.reference(ids, weights, extra=1, fill=1.0, first=8)
    assert torch.equal(got_ids, want_ids) and torch.equal(got_weights, want_weights)
    assert "def build_inputs" not in (folder / "reference.py").read_text()  # only what the reference needs


def test_a_subset_of_the_configs_is_not_imported(checkout: Path) -> None:
    _edit(checkout, "indices = list(range(len(ALL_CONFIGS)))", "indices = [0, 2]")
    assert _reason(checkout) == "run_correctness() is given 2 of the 3 configs, not all in order"


def test_a_list_that_top_level_loops_fill_is_the_comprehension_they_make(checkout: Path, tmp_path: Path) -> None:
    """`ALL_CONFIGS = []`, then nested `for`s around one `ALL_CONFIGS.append(...)`, then another
    loop: the same cases, in the same order, as `[... for m in _ROWS for s in [1, 2]] + [...]`."""
    _edit(
        checkout,
        'ALL_CONFIGS = [{"M": m, "K": _WIDTH, "S": 1, "N": 8, "fill": 1.0} for m in _ROWS]\n',
        "ALL_CONFIGS = []\n"
        "for m in _ROWS[:2]:\n"
        "    for s in [1, 2]:\n"
        '        ALL_CONFIGS.append({"M": m, "K": _WIDTH, "S": s, "N": 8, "fill": 1.0})\n'
        "for m in [7]:\n"
        '    ALL_CONFIGS.append({"M": m, "K": _WIDTH, "S": 1, "N": 8, "fill": 1.0})\n',
    )
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[APPEND_TASK].address == APPEND_ADDRESS, outcomes[APPEND_TASK].reason
    task = load_task(out, APPEND_ADDRESS)
    # S now differs by case, so the outputs' K + S axis is a dim of its own (out_ids_1).
    assert [(dict(c.dims), c.seed) for c in task.cases] == [
        ({"N": 8, "M": 1, "K": 2, "S": 1, "out_ids_1": 3}, 42),
        ({"N": 8, "M": 1, "K": 2, "S": 2, "out_ids_1": 4}, 43),
        ({"N": 8, "M": 4, "K": 2, "S": 1, "out_ids_1": 3}, 44),
        ({"N": 8, "M": 4, "K": 2, "S": 2, "out_ids_1": 4}, 45),
        ({"N": 8, "M": 7, "K": 2, "S": 1, "out_ids_1": 3}, 46),
    ]


def test_a_list_read_before_a_loop_fills_it_is_not_read(checkout: Path) -> None:
    _edit(checkout, "_WIDTH = 2\n", "_WIDTH = len(_ROWS)\nfor _m in range(3):\n    _ROWS.append(_m)\n")
    assert (
        _reason(checkout) == "the harness's cases `indices` cannot be read: _ROWS is built by top-level code (line 19)"
    )


def test_cases_built_by_top_level_code_are_not_imported(checkout: Path) -> None:
    _edit(checkout, "_WIDTH = 2\n", "_WIDTH = 2\nfor _m in range(3):\n    if _m:\n        _ROWS.append(_m)\n")
    assert (
        _reason(checkout) == "the harness's cases `indices` cannot be read: _ROWS is built by top-level code (line 19)"
    )


def test_a_helper_that_returns_early_is_not_inlined(checkout: Path) -> None:
    _edit(checkout, "    M, K, N = cfg[", "    if device is None:\n        return None\n    M, K, N = cfg[")
    assert "the helper build_inputs() returns other than at its end" in _reason(checkout)


def test_a_harness_that_calls_no_kernel_function_is_not_imported(checkout: Path) -> None:
    _edit(checkout, "from kernel import append_columns", "from kernel import ALL_ROWS")
    assert _reason(checkout) == "test_kernel_harness.py imports no function of the kernel file"


def test_a_constant_imported_from_the_kernel_file_is_read_among_its_names(checkout: Path, tmp_path: Path) -> None:
    """`from kernel import BASE_IDS`, where the kernel file has `_BASE = 8` and `BASE_IDS = _BASE`."""
    kernel = checkout / "tasks" / APPEND_TASK / "kernel.py"
    kernel.write_text(kernel.read_text() + "\n_BASE = 8\nBASE_IDS = _BASE\n")
    _edit(checkout, "from kernel import append_columns", "from kernel import BASE_IDS, append_columns")
    _edit(checkout, '"N": 8,', '"N": BASE_IDS,')
    out = tmp_path / "out"
    import_checkout(checkout, out)
    assert [dict(c.dims)["N"] for c in load_task(out, APPEND_ADDRESS).cases] == [8, 8, 8]

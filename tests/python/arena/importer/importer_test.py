"""import_checkout on the fake checkout in fixtures/: six tasks imported, one refused with its
reason; what it writes loads with arena's own task loader, and its reference computes what the
original test compares (several_outputs_test.py: the task whose kernel returns two tensors)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import torch

from arena.errors import ArenaError
from arena.importer.importer import import_checkout
from arena.importer.output import MARKER
from arena.task.load import load_task, load_tasks
from arena.task.task import Distribution, Tolerance
from arena_testing.modules import load_module

SCALE_TASK = "triton2triton/vllm/fake_scale"
SCALE_ADDRESS = f"tasks/{SCALE_TASK}:fake_scale"
QUANT_TASK = "triton2triton/vllm/fake_quant"
QUANT_ADDRESS = f"tasks/{QUANT_TASK}:fake_quant"
FILL_TASK = "triton2triton/vllm/fake_fill"
FILL_ADDRESS = f"tasks/{FILL_TASK}:fake_fill"
APPEND_TASK = "triton2triton/geak_eval/L1/fake_append"  # harness_test.py: the geak_eval layout
APPEND_ADDRESS = f"tasks/{APPEND_TASK}:fake_append"
SOFTMAX_TASK = "triton2triton/rocmbench/fake_softmax"  # pytest_layout_test.py: the rocmbench layout
SOFTMAX_ADDRESS = f"tasks/{SOFTMAX_TASK}:fake_softmax"
SEEDED_TASK = "triton2triton/vllm/fake_seeded"  # seeded_test.py: one case per seed, inputs from a helper
SEEDED_ADDRESS = f"tasks/{SEEDED_TASK}:fake_seeded"


def _outcomes(checkout: Path, out: Path) -> dict[str, str]:
    """Each task's address when imported, else its reason."""
    return {o.source: o.address or f"NO: {o.reason}" for o in import_checkout(checkout, out)}


def test_the_tensor_in_tensor_out_tasks_are_imported_and_the_others_say_why_not(checkout: Path, tmp_path: Path) -> None:
    here = Path.cwd()
    outcomes = _outcomes(checkout, tmp_path / "out")  # the hip2hip and torch2hip ones: hip_layout_test.py
    assert {name: outcome for name, outcome in outcomes.items() if name.startswith("triton2triton/")} == {
        SCALE_TASK: SCALE_ADDRESS,
        QUANT_TASK: QUANT_ADDRESS,
        FILL_TASK: FILL_ADDRESS,
        APPEND_TASK: APPEND_ADDRESS,
        SOFTMAX_TASK: SOFTMAX_ADDRESS,
        SEEDED_TASK: SEEDED_ADDRESS,
        "triton2triton/rocmbench/fake_add": "NO: `test_add` launches `add_kernel[grid](...)` inside "
        "`for _ in range(2):`; the importer wraps one launch",
    }
    assert Path.cwd() == here  # the runner's os.chdir (and its canary raise) never ran


def test_the_declaration_loads_with_the_task_loader(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    assert (out / MARKER).is_file()
    assert [task.address for task in load_tasks(out)] == [
        APPEND_ADDRESS,
        SOFTMAX_ADDRESS,
        FILL_ADDRESS,
        QUANT_ADDRESS,
        SCALE_ADDRESS,
        SEEDED_ADDRESS,
    ]
    task = load_task(out, SCALE_ADDRESS)
    assert task.category.value == "triton2triton"
    assert str(task.entry) == "source/fake_scale.py:scale_rows"
    assert task.baseline == ("source/fake_scale.py",) and task.sources == ("reference.py",)
    assert [(t.name, t.shape, t.dtype, t.dist) for t in task.inputs] == [
        ("x", ("rows", "cols"), "float16", Distribution("normal", {})),
        ("w", ("cols",), "float32", Distribution("uniform", {"low": 0.5, "high": 2.5})),
    ]
    assert [(t.name, t.shape, t.dtype) for t in task.outputs] == [("result", ("rows", "cols"), "float16")]
    assert task.scalars == {"alpha": 0.5}
    assert task.tolerances["float16"] == Tolerance(atol=1e-2, rtol=1e-3)
    assert [(c.name, dict(c.dims), c.seed, c.timed) for c in task.cases] == [
        ("shape1", {"rows": 4, "cols": 64}, 42, False),
        ("shape2", {"rows": 8, "cols": 256}, 43, True),
        ("shape3", {"rows": 16, "cols": 128}, 44, True),
    ]
    assert task.signature == (
        "scale_rows(x: [rows, cols] float16, w: [cols] float32, *, alpha=0.5) -> [rows, cols] float16"
    )
    assert task.description.startswith("Optimize `scale_rows`")
    assert "Imported from AgentKernelArena task triton2triton/vllm/fake_scale" in task.description


def test_the_reference_computes_what_the_test_compares(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    folder = out / "tasks" / SCALE_TASK
    reference = load_module(folder / "reference.py")
    kernel = load_module(folder / "source" / "fake_scale.py")
    x, w = torch.randn(4, 64, dtype=torch.float16), torch.rand(64) * 2 + 0.5
    want = (x.float() * w * 0.5).to(torch.float16)
    assert torch.equal(reference.reference(x, w, alpha=0.5), want)
    assert torch.equal(kernel.scale_rows(x, w, alpha=0.5), want)
    # The runner's helper is copied as it is; its module-level code (chdir, the canary) is not.
    text = (folder / "reference.py").read_text()
    assert "def reference_scale(x, w, alpha):" in text and "chdir" not in text and "raise" not in text


def test_an_argument_the_kernel_writes_and_the_test_compares_is_an_output_written_in_place(
    checkout: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    task = load_task(out, FILL_ADDRESS)
    assert [(t.name, t.shape, t.dtype, t.dist) for t in task.inputs] == [
        ("out", ("rows", "cols"), "float32", Distribution("constant", {"value": 0.0})),  # torch.zeros_like(x)
        ("x", ("rows", "cols"), "float32", Distribution("normal", {})),
    ]
    assert [(t.name, t.shape, t.dtype, t.inplace) for t in task.outputs] == [("out", ("rows", "cols"), "float32", True)]
    assert task.signature == "fill_rows(out: [rows, cols] float32, x: [rows, cols] float32) -> None; writes out"
    # The reference writes the input as the kernel does, and returns nothing else.
    reference = load_module(out / "tasks" / FILL_TASK / "reference.py")
    written, x = torch.zeros(4, 64), torch.randn(4, 64)
    assert reference.reference(written, x) is None
    assert torch.equal(written, x)


@pytest.mark.parametrize(
    "new, reason",
    [
        (
            "ref = out + 0\n        if not torch.equal(out, ref):",
            "line 28: the reference reads 'out' after the kernel wrote into it",
        ),
        ("if torch.equal(x, x):", "does not compare one whole output (out, x) with a reference"),
        ("if out.sum() != x.sum():", "returns nothing and the test compares none of the tensors"),
    ],
)
def test_a_written_argument_the_importer_cannot_check_says_why(
    checkout: Path, tmp_path: Path, new: str, reason: str
) -> None:
    runner = checkout / "tasks" / FILL_TASK / "scripts" / "task_runner.py"
    compared = "ref = x.clone()\n        if not torch.equal(out, ref):"
    runner.write_text(runner.read_text().replace(compared, new))
    assert reason in _outcomes(checkout, tmp_path / "out")[FILL_TASK]


def test_a_kernel_that_writes_its_argument_and_returns_a_tensor_has_its_return_declared_ignored(
    checkout: Path, tmp_path: Path
) -> None:
    """The test calls `mod.fill_rows(out, x)` and compares `out`: what the call returns, it never
    reads, so the entry says so (`-> ignored`) and the harness reads `out` alone."""
    kernel = checkout / "tasks" / FILL_TASK / "source" / "fake_fill.py"
    kernel.write_text(kernel.read_text().replace("    out.copy_(x)", "    out.copy_(x)\n    return out"))
    assert _outcomes(checkout, tmp_path / "out")[FILL_TASK] == FILL_ADDRESS
    task = load_task(tmp_path / "out", FILL_ADDRESS)
    assert str(task.entry) == "source/fake_fill.py:fill_rows -> ignored" and task.entry.return_ignored
    assert [(t.name, t.inplace) for t in task.outputs] == [("out", True)]
    assert task.signature == "fill_rows(out: [rows, cols] float32, x: [rows, cols] float32) -> ignored; writes out"


def _fill_returning(checkout: Path, returned: str, bound: str, comparison: str) -> Path:
    """fake_fill's kernel made to return `returned`, the test to bind it to `bound` and compare by
    `comparison`; the kernel file's path."""
    kernel = checkout / "tasks" / FILL_TASK / "source" / "fake_fill.py"
    runner = checkout / "tasks" / FILL_TASK / "scripts" / "task_runner.py"
    kernel.write_text(kernel.read_text().replace("    out.copy_(x)", f"    out.copy_(x)\n    return {returned}"))
    runner.write_text(
        runner.read_text()
        .replace("        mod.fill_rows(out, x)", f"        {bound} = mod.fill_rows(out, x)")
        .replace("        if not torch.equal(out, ref):", comparison)
    )
    return kernel


def test_a_kernel_that_returns_the_argument_it_writes_is_that_argument_written_in_place(
    checkout: Path, tmp_path: Path
) -> None:
    """rocmbench `test_kernel_dot`: `result = mod.fill_rows(out, x)`, which returns `out` itself, and
    the test compares `result`: the argument as the kernel leaves it, declared written in place
    with the return ignored. A view of it stays refused."""
    kernel = _fill_returning(checkout, "out", "result", "        if not torch.equal(result.cpu(), ref):")
    assert _outcomes(checkout, tmp_path / "out")[FILL_TASK] == FILL_ADDRESS
    task = load_task(tmp_path / "out", FILL_ADDRESS)
    assert str(task.entry) == "source/fake_fill.py:fill_rows -> ignored"
    assert [(t.name, t.inplace) for t in task.outputs] == [("out", True)]
    kernel.write_text(kernel.read_text().replace("    return out", "    return out[:]"))
    reason = _outcomes(checkout, tmp_path / "again")[FILL_TASK]
    assert (
        reason == "NO: each call must return new output tensors, and the kernel returns its tensor argument "
        "'out' (written in place) as its output 0 (line 7: `return out[:]`)"
    )


def test_a_kernel_that_returns_the_argument_it_writes_beside_a_new_tensor_gets_an_entry_for_the_new_one(
    checkout: Path, tmp_path: Path
) -> None:
    """vLLM `triton_get_num_sampled_and_rejected`: `return num_sampled, num_rejected`, the first
    written in place. The entry is a function appended to the kernel file's copy that returns the
    new tensor alone; the argument is an output written in place, as the test compares it."""
    _fill_returning(
        checkout,
        "out, x * 2",
        "result, doubled",
        "        if not torch.equal(doubled, x * 2):\n            return False, 'doubled'\n"
        "        if not torch.equal(result, ref):",
    )
    assert _outcomes(checkout, tmp_path / "out")[FILL_TASK] == FILL_ADDRESS
    task = load_task(tmp_path / "out", FILL_ADDRESS)
    assert str(task.entry) == "source/fake_fill.py:fill_rows_outputs"
    assert [(t.name, t.inplace) for t in task.outputs] == [("doubled", False), ("out", True)]
    copied = load_module(tmp_path / "out" / "tasks" / FILL_TASK / "source" / "fake_fill.py")
    out, x = torch.zeros(2, 3), torch.randn(2, 3)
    assert torch.equal(copied.fill_rows_outputs(out, x), x * 2) and torch.equal(out, x)


def test_a_declaration_arena_refuses_is_removed_and_reported(checkout: Path, tmp_path: Path) -> None:
    tasks = checkout / "tasks" / "triton2triton" / "vllm"
    shutil.copytree(tasks / "fake_scale", tasks / "fake:scale")  # ':' is no part of a task name
    outcomes = _outcomes(checkout, tmp_path / "out")
    assert outcomes["triton2triton/vllm/fake:scale"].startswith("NO: arena refuses the declaration: ")
    assert "must not contain '/' or ':'" in outcomes["triton2triton/vllm/fake:scale"]
    assert not (tmp_path / "out" / "tasks" / "triton2triton" / "vllm" / "fake:scale").exists()
    assert [task.address for task in load_tasks(tmp_path / "out")] == [
        APPEND_ADDRESS,
        SOFTMAX_ADDRESS,
        FILL_ADDRESS,
        QUANT_ADDRESS,
        SCALE_ADDRESS,
        SEEDED_ADDRESS,
    ]


def test_an_unreadable_config_is_that_task_s_reason(checkout: Path, tmp_path: Path) -> None:
    config = checkout / "tasks" / "triton2triton" / "vllm" / "fake_fill" / "config.yaml"
    config.write_text("task_type: triton2triton\nsource_file_path: [a.py, b.py]\n")
    outcomes = _outcomes(checkout, tmp_path / "out")
    assert outcomes["triton2triton/vllm/fake_fill"] == (
        "NO: config.yaml cannot be read: line 2: flow collections, anchors and tags are not read"
    )
    assert outcomes[SCALE_TASK] == SCALE_ADDRESS


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_config_that_cannot_be_opened_is_that_task_s_reason(checkout: Path, tmp_path: Path) -> None:
    config = checkout / "tasks" / "triton2triton" / "vllm" / "fake_fill" / "config.yaml"
    config.chmod(0)
    assert _outcomes(checkout, tmp_path / "out")["triton2triton/vllm/fake_fill"].startswith(
        "NO: config.yaml cannot be read: [Errno 13] Permission denied"
    )


def test_a_missing_checkout_or_one_without_triton2triton_tasks_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ArenaError, match="is not a folder: give the path of an AgentKernelArena checkout"):
        import_checkout(tmp_path / "nowhere", tmp_path / "out")
    (tmp_path / "other" / "tasks").mkdir(parents=True)
    with pytest.raises(ArenaError, match="has no tasks/triton2triton/ folder: it is not an AgentKernelArena"):
        import_checkout(tmp_path / "other", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_out_folder_in_use_is_refused_and_an_earlier_import_is_replaced(checkout: Path, tmp_path: Path) -> None:
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine")
    with pytest.raises(ArenaError, match="is not empty and holds no earlier import"):
        import_checkout(checkout, used)
    assert (used / "notes.txt").read_text() == "mine"

    out = tmp_path / "out"
    import_checkout(checkout, out)
    stale = out / "tasks" / "triton2triton" / "vllm" / "gone" / "BUILD"
    stale.parent.mkdir()
    stale.write_text("")
    assert _outcomes(checkout, out)[SCALE_TASK] == SCALE_ADDRESS
    assert not stale.exists()


def test_a_draw_whose_parameter_differs_between_cases_gets_per_case_dists(checkout: Path, tmp_path: Path) -> None:
    """`torch.full((cols,), rows * 0.5)`: the first case's constant as the input's distribution,
    each other case's as its `dists` override."""
    runner = checkout / "tasks" / SCALE_TASK / "scripts" / "task_runner.py"
    old = "w = torch.rand(cols, device=device, dtype=torch.float32) * 2 + 0.5"
    assert old in runner.read_text()
    runner.write_text(runner.read_text().replace(old, "w = torch.full((cols,), rows * 0.5, device=device)"))
    out = tmp_path / "out"
    import_checkout(checkout, out)
    task = load_task(out, SCALE_ADDRESS)
    assert [t.dist for t in task.inputs if t.name == "w"] == [Distribution("constant", {"value": 2.0})]
    assert [dict(c.dists) for c in task.cases] == [
        {},
        {"w": Distribution("constant", {"value": 4.0})},
        {"w": Distribution("constant", {"value": 8.0})},
    ]

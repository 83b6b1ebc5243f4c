"""A task runner without TEST_SHAPES (their fla/kda tasks): the fixture's fake_seeded loops over
SEEDS, draws its inputs in `gen_inputs(seed, device)`, calls `mod.rms_rows(*args, **kwargs)` and
compares `r_cpu = result.float().cpu()`; its own `reference` function is copied and reference.py's
function takes another name. And the reasons such a runner is not imported."""

from __future__ import annotations

from pathlib import Path

import torch

from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena.task.task import Distribution
from arena.task.tolerance import tolerance_for
from arena_testing.aka_refusal import refusal
from arena_testing.modules import load_module

SEEDED_TASK = "triton2triton/vllm/fake_seeded"
SEEDED_ADDRESS = f"tasks/{SEEDED_TASK}:fake_seeded"
RUNNER = Path("tasks") / SEEDED_TASK / "scripts" / "task_runner.py"


def _edit(checkout: Path, old: str, new: str) -> None:
    path = checkout / RUNNER
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _reason(checkout: Path) -> str:
    return refusal(checkout, SEEDED_TASK)


def test_one_case_per_seed_with_the_helper_s_draws(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[SEEDED_TASK].address == SEEDED_ADDRESS
    task = load_task(out, SEEDED_ADDRESS)
    # gen_inputs's `x = torch.randn(T, D) * 2`, its T and D the dims; `(x, 1e-5)` spread: eps.
    assert [(t.name, t.shape, t.dtype, t.dist) for t in task.inputs] == [
        ("x", ("T", "D"), "float32", Distribution("normal", {"std": 2.0})),
    ]
    assert task.scalars == {"eps": 1e-5}
    # `r_cpu = result.float().cpu()` is what the test compares: the output `result`.
    assert [(t.name, t.shape, t.dtype) for t in task.outputs] == [("result", ("T", "D"), "float32")]
    assert [(c.name, dict(c.dims), c.seed) for c in task.cases] == [
        ("shape1", {"T": 4, "D": 32}, 7),
        ("shape2", {"T": 4, "D": 32}, 8),
        ("shape3", {"T": 4, "D": 32}, 9),
    ]
    assert tolerance_for(task, "float32").atol == 1e-5


def test_the_runner_s_own_reference_is_copied_beside_another_name(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    assert str(load_task(out, SEEDED_ADDRESS).reference) == "reference.py:arena_reference"
    module = load_module(out / "tasks" / SEEDED_TASK / "reference.py")
    x = torch.randn(4, 32)
    want = x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5)
    torch.testing.assert_close(module.arena_reference(x, eps=1e-5), want)


def test_a_helper_that_fills_an_input_in_a_loop_is_the_reason(checkout: Path) -> None:
    _edit(checkout, "    return (x, 1e-5), {}", "    for t in range(T):\n        x[t] = t\n    return (x, 1e-5), {}")
    assert _reason(checkout).startswith("input 'x' is written by line ")


def test_seeds_that_are_not_a_literal_list_are_the_reason(checkout: Path) -> None:
    _edit(checkout, "SEEDS = [7, 8, 9]", "SEEDS = list(range(3))")
    assert _reason(checkout) == "SEEDS in scripts/task_runner.py is not a literal list"


def test_an_if_on_a_literal_takes_its_branch(checkout: Path, tmp_path: Path) -> None:
    """`if device != "cpu": x = x.to(device)` with `device = "cuda"`: the move, x still drawn."""
    _edit(
        checkout,
        "    return (x, 1e-5), {}",
        '    if device != "cpu":\n        x = x.to(device)\n    return (x, 1e-5), {}',
    )
    outcomes = {o.source: o for o in import_checkout(checkout, tmp_path / "out")}
    assert outcomes[SEEDED_TASK].address == SEEDED_ADDRESS


def test_a_reference_that_draws_its_own_inputs_is_the_reason(checkout: Path) -> None:
    _edit(
        checkout,
        "            ref = reference(*args_cpu, **kwargs)",
        '            cpu_args, _ = gen_inputs(seed, "cpu")\n            ref = reference(*cpu_args, **kwargs)',
    )
    assert _reason(checkout).startswith("line 50: `cpu_args, _ = gen_inputs(seed, 'cpu')` draws random values")


def test_a_loop_comparing_each_output_with_its_reference_is_unrolled(checkout: Path, tmp_path: Path) -> None:
    """`for idx, (r, ref) in enumerate(zip(results, refs))`, where the runner's reference returns
    two tensors: two outputs, each compared with its reference."""
    kernel = checkout / "tasks" / SEEDED_TASK / "source" / "fake_seeded.py"
    kernel.write_text(
        kernel.read_text().replace("    return x * torch.rsqrt(", "    return x.clone(), x * torch.rsqrt(")
    )
    _edit(checkout, "    return x / torch.sqrt(", "    return x, x / torch.sqrt(")
    _edit(
        checkout,
        """            result = mod.rms_rows(*args, **kwargs)
            ref = reference(*args_cpu, **kwargs)
            r_cpu = result.float().cpu()
            ref_f = ref.float()
            if not torch.allclose(r_cpu, ref_f, atol=1e-5, rtol=1e-5):
                return False, f"Shape {i+1}: differs\"""",
        """            results = mod.rms_rows(*args, **kwargs)
            refs = reference(*args_cpu, **kwargs)
            for idx, (r, ref) in enumerate(zip(results, refs)):
                if ref is None:
                    continue
                r_cpu = r.float().cpu()
                ref_f = ref.float()
                if not torch.allclose(r_cpu, ref_f, atol=1e-5, rtol=1e-5):
                    return False, f"Shape {i+1} output {idx}: differs\"""",
    )
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[SEEDED_TASK].address == SEEDED_ADDRESS, outcomes[SEEDED_TASK].reason
    task = load_task(out, SEEDED_ADDRESS)
    assert [(t.name, t.shape) for t in task.outputs] == [("results_0", ("T", "D")), ("results_1", ("T", "D"))]
    module = load_module(out / "tasks" / SEEDED_TASK / "reference.py")
    x = torch.randn(4, 32)
    first, second = module.arena_reference(x, eps=1e-5)
    assert torch.equal(first, x)
    torch.testing.assert_close(second, x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5))

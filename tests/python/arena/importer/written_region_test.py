"""A written argument the test compares in part (vLLM's `triton_prepare_prefill_inputs`:
`torch.equal(next_prefill_tokens.cpu()[:num_reqs], ref_next[:num_reqs])`, its buffer `num_reqs +
16` long): still an output written in place, compared whole; the reference writes the part the test
compares and leaves the rest as given (arena.importer.written_region). The fixture's fake_scale
task is copied as fake_prefix, its kernel writing the first n rows of a padded buffer."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from arena.harness.inputs import make_inputs
from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena_testing.aka_refusal import refusal
from arena_testing.aka_runner import runner_text, scale_task_copy
from arena_testing.modules import load_module

TASK = "triton2triton/vllm/fake_prefix"
ADDRESS = f"tasks/{TASK}:fake_prefix"
SHAPES = [(8, 16), (32, 64)]

KERNEL = '''"""A fake kernel file: the first rows of out, x doubled; out's padding rows left as they are."""
import torch


def double_rows(x: torch.Tensor, out: torch.Tensor) -> None:
    out[: x.shape[0], : x.shape[1]] = x * 2
'''

RUNNER = runner_text(
    "fake_prefix",
    """
def reference_double(x):
    return x * 2


def run_correctness():
    import torch
    mod = load_module()
    device = "cuda"
    for i, (n, cols) in enumerate(TEST_SHAPES):
        torch.manual_seed(42 + i)
        x = torch.randn(n, cols, device=device)
        out = torch.zeros(n + 4, cols, device=device)
        mod.double_rows(x, out)
        torch.cuda.synchronize()
        ref = reference_double(x.cpu())
        if not torch.allclose(out.cpu()[:n], ref[:n], atol=1e-5, rtol=1e-5):
            return False, f"Shape {i + 1}: mismatch"
    return True, None
""",
)


def _prefix_task(checkout: Path, runner: str = RUNNER, kernel: str = KERNEL) -> None:
    scale_task_copy(checkout, TASK, "double_rows", kernel, runner.replace("SHAPES_HERE", repr(SHAPES)))


@pytest.mark.parametrize(
    ("buffer", "part"),
    [("n + 4, cols", "[:n]"), ("n + 4, cols + 3", "[:n, :cols]"), ("n + 4, cols + 3", "[0:n, :cols]")],
)
def test_a_slice_of_a_written_argument_is_that_output_compared_whole(
    checkout: Path, tmp_path: Path, buffer: str, part: str
) -> None:
    runner = RUNNER.replace("torch.zeros(n + 4, cols,", f"torch.zeros({buffer},")
    _prefix_task(checkout, runner.replace("out.cpu()[:n], ref[:n]", f"out.cpu(){part}, ref{part}"))
    out = tmp_path / "out"
    [outcome] = [o for o in import_checkout(checkout, out) if o.source == TASK]
    assert outcome.address == ADDRESS, outcome.reason
    task = load_task(out, ADDRESS)
    assert [(o.name, o.inplace) for o in task.outputs] == [("out", True)]
    assert task.signature.endswith("-> None; writes out"), task.signature
    text = (out / "tasks" / TASK / "reference.py").read_text()
    assert f"out{part} = (ref{part}).to(" in text, text
    reference = load_module(out / "tasks" / TASK / "reference.py")
    for case, (n, cols) in zip(task.cases, SHAPES):
        x, written = make_inputs(task, case, torch.device("cpu"))
        given = written.clone()
        assert reference.reference(x, written) is None
        # the part the test compares is the test's reference; the rest comes back as given
        assert torch.equal(written[:n, :cols], x * 2)
        assert torch.equal(written[n:], given[n:]) and torch.equal(written[:, cols:], given[:, cols:])


@pytest.mark.parametrize(
    "compared", ["out.cpu()[:n:2], ref[:n:2]", "out.cpu()[0], ref[0]", "out[out > 0], ref[ref > 0]"]
)
def test_a_slice_with_a_step_an_index_or_a_mask_is_still_refused(checkout: Path, compared: str) -> None:
    _prefix_task(checkout, RUNNER.replace("out.cpu()[:n], ref[:n]", compared))
    assert "does not compare one whole output" in refusal(checkout, TASK)


def test_a_slice_of_a_returned_output_is_still_refused(checkout: Path) -> None:
    """What a returned output holds outside the slice, nothing defines (`torch.empty`)."""
    kernel = KERNEL.replace(
        "-> None:\n    out[: x.shape[0]] = x * 2", "-> torch.Tensor:\n    return torch.cat([x * 2, out])"
    )
    runner = RUNNER.replace("mod.double_rows(x, out)", "result = mod.double_rows(x, out)")
    _prefix_task(checkout, runner.replace("out.cpu()[:n]", "result.cpu()[:n]"), kernel)
    assert "does not compare the whole output 'result'" in refusal(checkout, TASK)


RETURNS_ROWS = KERNEL.replace("-> None:", "-> torch.Tensor:") + "    return out[: x.shape[0]]\n"


def test_a_kernel_returning_the_leading_rows_it_writes_is_read_as_writing_them(checkout: Path, tmp_path: Path) -> None:
    """vLLM's `triton_gather_block_tables`: `return dst_block_table[:num_reqs]`, compared with the
    reference whole: those rows of the argument, the rest as given."""
    runner = RUNNER.replace("mod.double_rows(x, out)", "result = mod.double_rows(x, out)")
    _prefix_task(checkout, runner.replace("out.cpu()[:n], ref[:n]", "result, ref"), RETURNS_ROWS)
    out = tmp_path / "out"
    [outcome] = [o for o in import_checkout(checkout, out) if o.source == TASK]
    assert outcome.address == ADDRESS, outcome.reason
    task = load_task(out, ADDRESS)
    assert [(o.name, o.inplace) for o in task.outputs] == [("out", True)]
    assert task.entry.symbol == "double_rows" and task.entry.return_ignored, task.entry
    text = (out / "tasks" / TASK / "reference.py").read_text()
    assert "out[:ref.shape[0]] = (ref).to(" in text, text
    reference = load_module(out / "tasks" / TASK / "reference.py")
    for case, (n, _) in zip(task.cases, SHAPES):
        x, written = make_inputs(task, case, torch.device("cpu"))
        given = written.clone()
        assert reference.reference(x, written) is None
        assert torch.equal(written[:n], x * 2) and torch.equal(written[n:], given[n:])


def test_a_kernel_returning_other_rows_of_its_argument_is_still_refused(checkout: Path) -> None:
    runner = RUNNER.replace("mod.double_rows(x, out)", "result = mod.double_rows(x, out)")
    kernel = RETURNS_ROWS.replace("return out[: x.shape[0]]", "return out[1 : x.shape[0] + 1]")
    _prefix_task(checkout, runner.replace("out.cpu()[:n], ref[:n]", "result, ref"), kernel)
    assert "the kernel returns its tensor argument 'out'" in refusal(checkout, TASK)

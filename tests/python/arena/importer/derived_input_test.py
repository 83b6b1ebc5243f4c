"""An input the test computes from another input (vLLM's Mamba chunk kernels: `dA_cumsum =
torch.cumsum(dt * -0.1, dim=-1)` beside `dt`): declared `cumsum_of` that input, which arena then
computes from the input's values (arena/task/derived.py). The fixture's fake_scale is given `v`
and `w = torch.cumsum(v * -0.1, dim=0)`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from arena.importer.checkout import find_tasks
from arena.importer.draws import distribution, find_draw
from arena.importer.importer import import_checkout, read_task
from arena.importer.outcome import NotImportable
from arena.task.load import load_task

TASK = "triton2triton/vllm/fake_scale"
ADDRESS = f"tasks/{TASK}:fake_scale"
RUNNER = Path("tasks") / TASK / "scripts" / "task_runner.py"
KERNEL = Path("tasks") / TASK / "source" / "fake_scale.py"
_DRAWN = "            w = torch.rand(cols, device=device, dtype=torch.float32) * 2 + 0.5\n"
_SUMMED = (
    "            v = torch.rand(cols, device=device, dtype=torch.float32) * 2 + 0.5\n"
    "            w = torch.cumsum(v * -0.1, dim=0)\n"
)


def _edit(checkout: Path, file: Path, old: str, new: str) -> None:
    path = checkout / file
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))


def test_a_cumsum_of_another_tensor_reads_as_computed_from_it() -> None:
    def read(source: str) -> dict[str, object]:
        draw = find_draw("w", ast.parse(source, mode="eval").body)
        return distribution(draw, "w", lambda node: eval(compile(ast.Expression(node), "<case>", "eval")))

    assert read("torch.cumsum(dt * -0.1, dim=-1)") == {"kind": "cumsum_of", "input": "dt", "dim": -1, "scale": -0.1}
    assert read("dt.cumsum(1) * 2") == {"kind": "cumsum_of", "input": "dt", "dim": 1, "scale": 2.0}
    assert read("torch.cumsum(dt, dim=0)") == {"kind": "cumsum_of", "input": "dt", "dim": 0}
    with pytest.raises(NotImportable, match="shifts a cumulative sum"):
        read("torch.cumsum(dt, dim=0) + 1")


def test_the_input_is_declared_computed_from_the_input_the_kernel_is_given(checkout: Path, tmp_path: Path) -> None:
    _edit(checkout, RUNNER, _DRAWN, _SUMMED)
    _edit(checkout, RUNNER, "mod.scale_rows(x, w, alpha=ALPHA)", "mod.scale_rows(x, v, w, alpha=ALPHA)")
    _edit(checkout, KERNEL, "def scale_rows(x: torch.Tensor, w: torch.Tensor,", "def scale_rows(x, v, w,")
    outcomes = {o.source: o for o in import_checkout(checkout, tmp_path / "out")}
    assert outcomes[TASK].address == ADDRESS, outcomes[TASK].reason
    task = load_task(tmp_path / "out", ADDRESS)
    assert [(t.name, t.dist.kind, dict(t.dist.params)) for t in task.inputs][1:] == [
        ("v", "uniform", {"low": 0.5, "high": 2.5}),
        ("w", "cumsum_of", {"input": "v", "dim": 0, "scale": -0.1}),
    ]


def test_a_sum_of_a_tensor_the_kernel_is_not_given_is_the_reason(checkout: Path) -> None:
    _edit(checkout, RUNNER, _DRAWN, _SUMMED)
    [task] = [t for t in find_tasks(checkout) if t.name == TASK]
    with pytest.raises(NotImportable) as raised:
        read_task(task, checkout)
    assert str(raised.value) == (
        "input 'w' is the running sums of 'v', which the kernel is not given before it (arena computes it from one)"
    )

"""A kernel function the test gives a list of tensors and a None (vLLM's `triton_fused_moe_lora`:
`lora_a = [torch.randn(...) * 0.1]`, then `fused_moe_lora(output, qcurr, lora_a, lora_b, topk_weights,
None, ...)`): read through the function appended to the kernel file's copy (arena.importer.scalar_arguments),
which takes each element of the list as an input and builds the list again, and passes the None as the
test writes it. The fixture's fake_scale task is rewritten here to call so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from arena.importer.checkout import find_tasks
from arena.importer.importer import import_checkout, read_task
from arena.importer.outcome import NotImportable
from arena.task.load import load_task
from arena_testing.modules import load_module

TASK = "triton2triton/vllm/fake_scale"
ADDRESS = f"tasks/{TASK}:fake_scale"
FOLDER = Path("tasks") / TASK

RUNNER = Path("tasks") / TASK / "scripts" / "task_runner.py"
KERNEL = Path("tasks") / TASK / "source" / "fake_scale.py"
DRAW = "torch.rand(cols, device=device, dtype=torch.float32) * 2 + 0.5"


def _write(checkout: Path, listed: bool = True) -> None:
    """The fixture's fake_scale given `w` as a list of one tensor (or the tensor alone) and a bias
    that is None in every case."""
    first = "[0]" if listed else ""
    for path, edits in [
        (
            RUNNER,
            [
                (f"w = {DRAW}", f"w = [{DRAW}]" if listed else f"w = {DRAW}"),
                ("mod.scale_rows(x, w, alpha=ALPHA)", "mod.scale_rows(x, w, None, alpha=ALPHA)"),
                ("x.float() * w.float()", f"x.float() * w{first}.float()"),
            ],
        ),
        (
            KERNEL,
            [
                ("w: torch.Tensor, alpha", "w, bias, alpha"),
                ("x.float() * w.float()", f"x.float() * w{first}.float()"),
            ],
        ),
    ]:
        text = (checkout / path).read_text()
        for old, new in edits:
            assert old in text, old
            text = text.replace(old, new)
        (checkout / path).write_text(text)


def test_a_list_of_tensors_is_its_elements_and_a_none_is_passed_as_written(checkout: Path, tmp_path: Path) -> None:
    _write(checkout)
    out = tmp_path / "out"
    assert {o.source: o.address or o.reason for o in import_checkout(checkout, out)}[TASK] == ADDRESS
    task = load_task(out, ADDRESS)
    assert str(task.entry) == "source/fake_scale.py:scale_rows_scalars"
    assert [(t.name, t.shape, t.dist.kind) for t in task.inputs] == [
        ("x", ("rows", "cols"), "normal"),
        ("w_0", ("cols",), "uniform"),
    ]
    assert dict(task.scalars) == {"alpha": 0.5}
    kernel_text = (out / FOLDER / "source" / "fake_scale.py").read_text()
    assert kernel_text.startswith((checkout / KERNEL).read_text().rstrip("\n"))  # copied, the function appended
    assert kernel_text.endswith(
        "# A list of tensors is given as its elements, each an input, and built again; a None the test\n"
        "# gives in every case is passed as written.\n"
        "def scale_rows_scalars(x, w_0, *, alpha):\n"
        "    return scale_rows(x, [w_0], None, alpha=alpha)\n"
    )
    reference_text = (out / FOLDER / "reference.py").read_text()
    assert "    w = [w_0]\n" in reference_text  # the reference reads the list, built again
    copied = load_module(out / FOLDER / "source" / "fake_scale.py")
    reference = load_module(out / FOLDER / "reference.py")
    x, w = torch.randn(4, 64, dtype=torch.float16), torch.rand(64) + 0.5
    got = copied.scale_rows_scalars(x, w, alpha=0.5)
    assert torch.equal(got, copied.scale_rows(x, [w], None, alpha=0.5))
    assert torch.allclose(got.float(), reference.reference(x, w, alpha=0.5).float(), atol=1e-2, rtol=1e-2)


def test_a_none_beside_tensors_alone_is_passed_as_written(checkout: Path) -> None:
    _write(checkout, listed=False)
    [task] = [t for t in find_tasks(checkout) if t.name == TASK]
    text = read_task(task, checkout).files["source/fake_scale.py"].decode()
    assert text.endswith("def scale_rows_scalars(x, w, *, alpha):\n    return scale_rows(x, w, None, alpha=alpha)\n")


@pytest.mark.parametrize(
    "listed",
    [
        f"[{DRAW}, 2.0]",  # an element that is no tensor: the list is not one of inputs
        f"[*[{DRAW}]]",  # a starred display: its elements are not each written
    ],
)
def test_a_list_that_is_not_one_display_of_tensors_is_refused(checkout: Path, listed: str) -> None:
    _write(checkout)
    runner = checkout / RUNNER
    runner.write_text(runner.read_text().replace(f"w = [{DRAW}]", f"w = {listed}"))
    [task] = [t for t in find_tasks(checkout) if t.name == TASK]
    with pytest.raises(NotImportable, match=re.escape("argument w=tuple is not a number or a bool")):
        read_task(task, checkout)

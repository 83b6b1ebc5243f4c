"""vLLM's layer-norm tests (`triton_fla_layernorm`, `triton_layernorm_gated`, ...): a tensor drawn
in some cases and None in others (`b = torch.randn(N) if has_bias else None`), a tensor passed by
keyword, a string or bool unpacked inside the loop from `TEST_CASES[i]`, and a kernel function
returning a tuple of which the test keeps one element (`out, _, _ = mod.fn(...)`, or
`result_tuple[0] if isinstance(result_tuple, tuple) else result_tuple`). Read through functions
appended to the kernel file's copy (arena.importer.picked_outputs, returned_argument,
scalar_arguments): the first returns the element the test keeps, the second takes every tensor by
position, a 0/1 flag for each that the test gives only in some cases, and the string's index."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena_testing.aka_refusal import refusal
from arena_testing.modules import load_module

TASK = "triton2triton/vllm/fake_scale"
ADDRESS = f"tasks/{TASK}:fake_scale"
FOLDER = Path("tasks") / TASK

KERNEL = '''"""A fake kernel file: x and w combined as `mode` says, plus a bias, gated, and two more values."""
import torch


def scale_rows(x, w, bias=None, mode="add", gate=None):
    y = x * w if mode == "mul" else x + w
    if bias is not None:
        y = y + bias
    if gate is not None:
        y = y * torch.sigmoid(gate)
    return y, y.sum(-1), None
'''

RUNNER = '''#!/usr/bin/env python3
"""Task runner for triton2triton/fake_scale: optional tensors, a string by case, a tuple returned."""
import importlib

raise RuntimeError("arena import aka ran the task runner")

TEST_CASES = [
    (4, 64, "mul", True, False),
    (8, 32, "add", False, True),
    (4, 16, "mul", True, True),
]


def load_module():  # the kernel file, as AKA's runners load it (never run here)
    return importlib.import_module("fake_scale")


def reference_scale(x, w, bias, mode, gate):
    import torch
    y = x.double() * w.double() if mode == "mul" else x.double() + w.double()
    if bias is not None:
        y = y + bias.double()
    if gate is not None:
        y = y * torch.sigmoid(gate.double())
    return y.float()


def run_correctness():
    import torch
    mod = load_module()
    device = "cuda"
    for i, case in enumerate(TEST_CASES):
        torch.manual_seed(42 + i)
        rows, cols, mode, has_bias, has_gate = TEST_CASES[i]
        x = torch.randn(rows, cols, device=device)
        w = torch.randn(cols, device=device)
        bias = torch.randn(cols, device=device) if has_bias else None
        gate = None if not has_gate else torch.randn(rows, cols, device=device)
        CALL
        ref = reference_scale(x, w, bias, mode, gate)
        if not torch.allclose(result, ref, atol=1e-5, rtol=1e-5):
            return False, f"Case {i + 1}: mismatch"
    return True, None
'''

UNPACKED = "result, _, _ = mod.scale_rows(x, w, bias, mode=mode, gate=gate)"
INDEXED = (
    "result_tuple = mod.scale_rows(x, w, bias, mode=mode, gate=gate)\n"
    "        result = result_tuple[0] if isinstance(result_tuple, tuple) else result_tuple"
)


def _write(checkout: Path, call: str, kernel: str = KERNEL) -> None:
    (checkout / FOLDER / "source" / "fake_scale.py").write_text(kernel)
    (checkout / FOLDER / "scripts" / "task_runner.py").write_text(RUNNER.replace("CALL", call))


@pytest.mark.parametrize("call", [UNPACKED, INDEXED])
def test_optional_tensors_a_string_by_case_and_one_element_kept(checkout: Path, tmp_path: Path, call: str) -> None:
    _write(checkout, call)
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[TASK].address == ADDRESS, outcomes[TASK].reason
    task = load_task(out, ADDRESS)
    assert str(task.entry) == "source/fake_scale.py:scale_rows_outputs_scalars"
    # every tensor drawn in every case, given by position; the flags and the string's index by case
    assert [t.name for t in task.inputs] == ["x", "w", "bias", "gate"]
    assert [(o.name, o.dtype) for o in task.outputs] == [("result", "float32")]
    assert [{k: v for k, v in c.dims.items() if k not in ("rows", "cols")} for c in task.cases] == [
        {"bias_given": 1, "mode": 0, "gate_given": 0},
        {"bias_given": 0, "mode": 1, "gate_given": 1},
        {"bias_given": 1, "mode": 0, "gate_given": 1},
    ]
    # the kernel file unchanged, two functions appended: the first returns the element kept
    original, appended = (out / FOLDER / "source" / "fake_scale.py").read_text().split("\n\n\n# Appended", 1)
    assert original == KERNEL.rstrip("\n") and appended.endswith(
        "def scale_rows_outputs(x, w, bias=None, mode='add', gate=None):\n"
        "    returned = scale_rows(x, w, bias, mode, gate)\n"
        "    return returned[0]\n"
        "\n\n"
        "# Appended by `arena import aka`: `scale_rows_outputs` called as the test calls it, given what arena's\n"
        "# inputs and scalars hold: its tensors by position (with a 0/1 flag `<name>_given` where the test\n"
        "# gives None in some cases), a list's elements as separate numbers, a dtype as the test writes it,\n"
        "# a bool or string that differs between cases as the index of the case's value; the task's entry.\n"
        "def scale_rows_outputs_scalars(x, w, bias, gate, *, bias_given, mode, gate_given):\n"
        "    return scale_rows_outputs(x, w, bias if bias_given else None, mode=('mul', 'add')[mode], "
        "gate=gate if gate_given else None)\n"
    )
    reference_text = (out / FOLDER / "reference.py").read_text()
    assert "TEST_CASES[i]" not in reference_text  # what it needs of that unpacking, it is given
    copied = load_module(out / FOLDER / "source" / "fake_scale.py")
    reference = load_module(out / FOLDER / "reference.py")
    x, w, bias, gate = torch.randn(4, 16), torch.randn(16), torch.randn(16), torch.randn(4, 16)
    for bias_given, mode, gate_given in [(1, 0, 0), (0, 1, 1), (1, 0, 1)]:
        flags = {"bias_given": bias_given, "mode": mode, "gate_given": gate_given}
        got = copied.scale_rows_outputs_scalars(x, w, bias, gate, **flags)
        as_tested = copied.scale_rows(
            x, w, bias if bias_given else None, mode=("mul", "add")[mode], gate=gate if gate_given else None
        )[0]
        assert torch.equal(got, as_tested)
        assert torch.allclose(got, reference.reference(x, w, bias, gate, **flags), atol=1e-5, rtol=1e-5)


def test_a_kept_element_of_what_is_not_always_a_tuple_display_is_refused(checkout: Path) -> None:
    kernel = KERNEL.replace(
        "    if bias is not None:\n", "    if x is None:\n        return y\n    if bias is not None:\n"
    )
    _write(checkout, UNPACKED, kernel)
    assert refusal(checkout, TASK) == (
        "the test keeps element(s) 0 of what `scale_rows` returns, "
        "which does not always return a tuple display of one length"
    )


def test_a_tensor_set_to_none_otherwise_than_by_one_conditional_draw_is_refused(checkout: Path) -> None:
    _write(checkout, UNPACKED)
    runner = checkout / FOLDER / "scripts" / "task_runner.py"
    text = runner.read_text().replace(
        "        bias = torch.randn(cols, device=device) if has_bias else None\n",
        "        bias = torch.randn(cols, device=device)\n        if not has_bias:\n            bias = None\n",
    )
    runner.write_text(text)
    assert "bias" in refusal(checkout, TASK)


def test_a_tensor_passed_by_keyword_alone_is_taken_by_position(checkout: Path, tmp_path: Path) -> None:
    """`mod.scale_rows(x, w=w)` past a parameter the test leaves out: nothing else in the call needs
    the appended function, which still gives `w` by keyword (by position it would fill `bias`).
    Session 25's list-of-tensors change had dropped this reading (the kernel call was refused:
    "tensor w= is passed by keyword; arena passes inputs by position")."""
    kernel = "import torch\n\n\ndef scale_rows(x, bias=None, w=None):\n    return x * w\n"
    (checkout / FOLDER / "source" / "fake_scale.py").write_text(kernel)
    runner = RUNNER.replace("CALL", "result = mod.scale_rows(x, w=w)")
    runner = runner.replace("ref = reference_scale(x, w, bias, mode, gate)", "ref = x * w")
    (checkout / FOLDER / "scripts" / "task_runner.py").write_text(runner)
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[TASK].address == ADDRESS, outcomes[TASK].reason
    task = load_task(out, ADDRESS)
    assert str(task.entry) == "source/fake_scale.py:scale_rows_scalars"
    assert [t.name for t in task.inputs] == ["x", "w"]
    copied = load_module(out / FOLDER / "source" / "fake_scale.py")
    assert (
        (out / FOLDER / "source" / "fake_scale.py")
        .read_text()
        .endswith("def scale_rows_scalars(x, w):\n    return scale_rows(x, w=w)\n")
    )
    x, w = torch.randn(4, 16), torch.randn(16)
    assert torch.equal(copied.scale_rows_scalars(x, w), x * w)

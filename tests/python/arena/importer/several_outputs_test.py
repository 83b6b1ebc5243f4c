"""A kernel that returns several tensors: the fixture's fake_quant returns (q int8, scales float32)
and its test compares scales first, then q. One `outputs` entry per returned tensor, in the
kernel's order; tolerances per dtype from the comparison of each; a reference that returns the
same tuple; and the reasons a test of several outputs is not imported."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from arena.importer.checkout import find_tasks
from arena.importer.importer import import_checkout, read_task
from arena.importer.outcome import NotImportable
from arena.task.load import load_task
from arena.task.task import Distribution, Tolerance
from arena.task.tolerance import tolerance_for
from arena_testing.modules import load_module

QUANT_TASK = "triton2triton/vllm/fake_quant"
QUANT_ADDRESS = f"tasks/{QUANT_TASK}:fake_quant"
FOLDER = Path("tasks") / QUANT_TASK
RUNNER = FOLDER / "scripts" / "task_runner.py"
KERNEL = FOLDER / "source" / "fake_quant.py"
COMPARE_Q = "if not torch.equal(q, ref_q):"
COMPARE_SCALES = "if not torch.allclose(scales, ref_s, atol=1e-6, rtol=1e-4):"


def _edit(checkout: Path, relative: Path, old: str, new: str) -> None:
    path = checkout / relative
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _read_quant_task(checkout: Path) -> dict[str, bytes]:
    [task] = [t for t in find_tasks(checkout) if t.name == QUANT_TASK]
    return read_task(task, checkout).files


def test_each_returned_tensor_is_an_output_with_its_shape_dtype_and_tolerance(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    task = load_task(out, QUANT_ADDRESS)
    assert [(t.name, t.shape, t.dtype, t.dist) for t in task.inputs] == [
        ("x", ("rows", "cols"), "float16", Distribution("normal", {"std": 4.0})),
    ]
    # In the order the kernel returns them, not the order the test compares them in.
    assert [(t.name, t.shape, t.dtype) for t in task.outputs] == [
        ("q", ("rows", "cols"), "int8"),
        ("scales", ("rows", 1), "float32"),
    ]
    assert task.signature == "quantize_rows(x: [rows, cols] float16) -> ([rows, cols] int8, [rows, 1] float32)"
    # scales' allclose sets float32's tolerance; q (torch.equal) is int8, which arena checks exactly.
    assert tolerance_for(task, "float32") == Tolerance(atol=1e-6, rtol=1e-4)
    assert tolerance_for(task, "int8") == Tolerance(atol=0.0, rtol=0.0)
    build = (out / FOLDER / "BUILD").read_text()
    assert "tolerances={'float32': {'atol': 1e-06, 'rtol': 0.0001}}," in build
    assert [(c.name, dict(c.dims), c.seed, c.timed) for c in task.cases] == [
        ("shape1", {"rows": 4, "cols": 64}, 42, False),
        ("shape2", {"rows": 8, "cols": 256}, 43, True),
        ("shape3", {"rows": 16, "cols": 128}, 44, True),
    ]


def test_the_reference_returns_the_same_tuple_as_the_kernel(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    reference = load_module(out / FOLDER / "reference.py")
    kernel = load_module(out / KERNEL)
    x = torch.randn(8, 256, dtype=torch.float16) * 4
    got = reference.reference(x)
    want = kernel.quantize_rows(x)
    assert isinstance(got, tuple) and len(got) == 2
    assert [(t.dtype, tuple(t.shape)) for t in got] == [(torch.int8, (8, 256)), (torch.float32, (8, 1))]
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    text = (out / FOLDER / "reference.py").read_text()
    assert "def reference(x):" in text and "ref_q, ref_s = reference_quant(x)" in text
    assert (
        "    return (\n"
        "        (ref_q).to(device=x.device, dtype=torch.int8),\n"
        "        (ref_s).to(device=x.device, dtype=torch.float32),\n"
        "    )\n"
    ) in text


def test_outputs_of_two_float_dtypes_each_get_their_own_comparison_s_tolerance(checkout: Path, tmp_path: Path) -> None:
    _edit(checkout, KERNEL, "torch.empty((rows, cols), device=x.device, dtype=torch.int8)", "torch.empty_like(x)")
    _edit(checkout, RUNNER, COMPARE_Q, "if not torch.allclose(q.float(), ref_q.float(), atol=0.5, rtol=0.0):")
    out = tmp_path / "out"
    import_checkout(checkout, out)
    task = load_task(out, QUANT_ADDRESS)
    assert [(t.name, t.dtype) for t in task.outputs] == [("q", "float16"), ("scales", "float32")]
    assert tolerance_for(task, "float16") == Tolerance(atol=0.5, rtol=0.0)
    assert tolerance_for(task, "float32") == Tolerance(atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize(
    "path, old, new, reason",
    [
        (
            RUNNER,
            f'            {COMPARE_Q}\n                return False, f"Shape {{i + 1}}: quantized values differ"\n',
            "",
            "`mod.quantize_rows` returns 2 tensors and the test compares 1 of them (scales); arena checks every output",
        ),
        (
            RUNNER,
            COMPARE_Q,
            "if not torch.allclose(q.float(), ref_q.float(), atol=1.0, rtol=0.0):",
            "output 'q' is int8 and the test accepts differences in it (atol 1, rtol 0); "
            "arena checks integer outputs exactly",
        ),
        (
            KERNEL,
            "device=x.device, dtype=torch.int8)",
            "device=x.device, dtype=torch.float32)",
            "outputs 'q' and 'scales' are both float32 and the test compares them within different tolerances "
            "(atol 0, rtol 0; atol 1e-06, rtol 0.0001); arena's tolerances are per dtype",
        ),
        (
            RUNNER,
            "            ref_q = ref_q.to(device)\n",
            "            ref_s = ref_s * 2\n",
            "`ref_s = ref_s * 2` rebinds 'ref_s' after the test compared it",
        ),
        (
            RUNNER,
            COMPARE_Q,
            "if not torch.equal(q.float() * scales, ref_q.float() * ref_s):",
            "does not compare one whole output (q, scales) with a reference",
        ),
        (
            RUNNER,
            COMPARE_Q,
            "if not torch.allclose(q, scales):",
            "does not compare one whole output (q, scales) with a reference",
        ),
        (
            RUNNER,
            "            ref_q = ref_q.to(device)\n",
            "            for r in range(rows):\n                ref_q[r] = 0\n",
            "`for r in range(rows):` checks the case with code the importer does not follow",
        ),
        (
            RUNNER,
            "q, scales = mod.quantize_rows(x)",
            "q, *scales = mod.quantize_rows(x)",
            "the kernel's outputs are unpacked into other than plain names",
        ),
        (
            KERNEL,
            "    return q, scales\n",
            "    return q, scales, xf\n",
            "case 1: `quantize_rows` returns 3 values and the test unpacks 2 (q, scales)",
        ),
        (
            KERNEL,
            "    return q, scales\n",
            "    return q\n",
            "case 1: `quantize_rows` returns a int8 tensor of shape [4, 64], which the test unpacks into 2 names",
        ),
    ],
)
def test_a_test_of_several_outputs_the_importer_cannot_read_says_why(
    checkout: Path, path: Path, old: str, new: str, reason: str
) -> None:
    _edit(checkout, path, old, new)
    with pytest.raises(NotImportable) as caught:
        _read_quant_task(checkout)
    assert reason in str(caught.value)

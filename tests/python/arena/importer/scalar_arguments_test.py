"""A kernel function the test gives a list of numbers and a torch dtype (vLLM's
`w8a8_block_int8_matmul(A, B, As, Bs, [block_n, block_k], output_dtype=torch.float16)`): read
through a function appended to the kernel file's copy that takes the list's elements as separate
scalars and passes the dtype as the test writes it (arena.importer.scalar_arguments); what is not
read exactly (a starred list, a kernel file without `import torch`) is
refused with the reason. The fixture's fake_scale task is rewritten here to call so."""

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

KERNEL = '''"""A fake kernel file: x scaled by w and a pair of factors, in the dtype asked for."""
import torch


def scale_rows(x: torch.Tensor, w: torch.Tensor, factors: list, output_dtype: torch.dtype = torch.float32):
    a, b = factors
    return (x.float() * w.float() * a + b).to(output_dtype)
'''

RUNNER = '''#!/usr/bin/env python3
"""Task runner for triton2triton/fake_scale, calling its kernel with a list and a dtype."""
import importlib.util
import os

TASK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_FILE = os.path.join(TASK_DIR, "source", "fake_scale.py")
raise RuntimeError("arena import aka ran the task runner")

TEST_SHAPES = [
    (4, 64, 2),
    (8, 256, 3),
]
ALPHA = 0.5


def load_module():
    spec = importlib.util.spec_from_file_location("kernel", SOURCE_FILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reference_scale(x, w, factors, output_dtype):
    import torch
    a, b = factors
    return (x.double() * w.double() * a + b).to(output_dtype)


def run_correctness():
    import torch
    mod = load_module()
    device = "cuda"
    dtype = torch.float16
    for i, (rows, cols, k) in enumerate(TEST_SHAPES):
        torch.manual_seed(42 + i)
        x = torch.randn(rows, cols, device=device, dtype=torch.float32)
        w = torch.rand(cols, device=device, dtype=torch.float32) * 2 + 0.5
        result = mod.scale_rows(x, w, FACTORS, output_dtype=DTYPE)
        ref = reference_scale(x, w, FACTORS, torch.float16)
        if not torch.allclose(result, ref, atol=1e-2, rtol=1e-2):
            return False, f"Shape {i + 1}: mismatch"
    return True, None
'''


def _write(checkout: Path, factors: str = "[ALPHA, k]", dtype: str = "torch.float16", kernel: str = KERNEL) -> None:
    (checkout / FOLDER / "source" / "fake_scale.py").write_text(kernel)
    runner = RUNNER.replace("FACTORS", factors).replace("DTYPE", dtype)
    (checkout / FOLDER / "scripts" / "task_runner.py").write_text(runner)


def _read(checkout: Path) -> dict[str, bytes]:
    [task] = [t for t in find_tasks(checkout) if t.name == TASK]
    return read_task(task, checkout).files


@pytest.mark.parametrize(
    ("factors", "rebuilt"), [("[ALPHA, k]", "[factors_0, factors_1]"), ("(ALPHA, k)", "(factors_0, factors_1)")]
)
def test_a_list_s_elements_are_scalars_and_the_dtype_is_passed_as_the_test_writes_it(
    checkout: Path, tmp_path: Path, factors: str, rebuilt: str
) -> None:
    _write(checkout, factors)
    out = tmp_path / "out"
    outcomes = {o.source: o.address or o.reason for o in import_checkout(checkout, out)}
    assert outcomes[TASK] == ADDRESS
    task = load_task(out, ADDRESS)
    assert str(task.entry) == "source/fake_scale.py:scale_rows_scalars"
    assert dict(task.scalars) == {"factors_0": 0.5, "factors_1": "k"}
    assert [dict(c.dims) for c in task.cases] == [
        {"rows": 4, "cols": 64, "k": 2},
        {"rows": 8, "cols": 256, "k": 3},
    ]
    assert [(o.name, o.dtype) for o in task.outputs] == [("result", "float16")]
    kernel_text = (out / FOLDER / "source" / "fake_scale.py").read_text()
    assert kernel_text.startswith(KERNEL.rstrip("\n"))  # the kernel file unchanged, the function appended
    assert kernel_text.endswith(
        "# Appended by `arena import aka`: `scale_rows` given a list's elements as separate numbers\n"
        "# and the test's dtype as the test writes it (arena's scalars are numbers); the task's entry.\n"
        "def scale_rows_scalars(x, w, factors_0, factors_1):\n"
        f"    return scale_rows(x, w, {rebuilt}, output_dtype=torch.float16)\n"
    )
    copied = load_module(out / FOLDER / "source" / "fake_scale.py")
    reference = load_module(out / FOLDER / "reference.py")
    x, w = torch.randn(4, 64), torch.rand(64) + 0.5
    got = copied.scale_rows_scalars(x, w, 0.5, 2)
    assert got.dtype == torch.float16
    assert torch.equal(got, copied.scale_rows(x, w, [0.5, 2], output_dtype=torch.float16))
    want = reference.reference(x, w, factors_0=0.5, factors_1=2)
    assert want.dtype == torch.float16 and torch.allclose(got.float(), want.float(), atol=1e-2, rtol=1e-2)


def test_a_dtype_alone_is_passed_through_the_appended_function(checkout: Path) -> None:
    _write(checkout, factors="ALPHA_PAIR")
    runner = checkout / FOLDER / "scripts" / "task_runner.py"
    runner.write_text(runner.read_text().replace("ALPHA = 0.5\n", "ALPHA = 0.5\nALPHA_PAIR = 0.5\n"))
    kernel = KERNEL.replace("    a, b = factors\n", "    a, b = factors, 1.0\n")
    (checkout / FOLDER / "source" / "fake_scale.py").write_text(kernel)
    text = _read(checkout)["source/fake_scale.py"].decode()
    assert text.endswith(
        "def scale_rows_scalars(x, w, factors):\n    return scale_rows(x, w, factors, output_dtype=torch.float16)\n"
    )


@pytest.mark.parametrize(
    ("factors", "dtype", "kernel", "reason"),
    [
        # A starred list: its elements are not each an argument.
        ("[*(ALPHA, k)]", "torch.float16", KERNEL, "argument factors=tuple is not a number or a bool"),
        # The kernel file does not bind `torch` itself, which the appended `torch.float16` reads.
        (
            "[ALPHA, k]",
            "torch.float16",
            KERNEL.replace("import torch\n", "import torch as th\ntorch = th\n"),
            "argument factors=tuple is not a number or a bool",
        ),
    ],
)
def test_what_is_not_read_exactly_is_refused(
    checkout: Path, factors: str, dtype: str, kernel: str, reason: str
) -> None:
    _write(checkout, factors, dtype, kernel)
    with pytest.raises(NotImportable, match=re.escape(reason)):
        _read(checkout)


def test_a_dtype_held_by_a_name_is_passed_as_the_dtype_it_holds_in_every_case(checkout: Path) -> None:
    """vLLM's `triton_scaled_mm`: `dtype = torch.float16` before the loop, `fn(..., dtype)`."""
    _write(checkout, dtype="dtype")
    text = _read(checkout)["source/fake_scale.py"].decode()
    assert "    return scale_rows(x, w, [factors_0, factors_1], output_dtype=torch.float16)\n" in text


def test_a_draw_cast_to_a_dtype_not_read_is_refused(checkout: Path) -> None:
    """vLLM's `A = A_f.to(fp8_dtype)`, `fp8_dtype = mod._get_fp8_dtype()` (which asks the GPU): the
    cast's dtype is not known, so the input is not the float32 draw it casts."""
    kernel = KERNEL + "\n\ndef pick_dtype():\n    return torch.zeros(1, device='cuda').dtype\n"
    _write(checkout, kernel=kernel)
    runner = checkout / FOLDER / "scripts" / "task_runner.py"
    text = runner.read_text().replace(
        "        x = torch.randn(rows, cols, device=device, dtype=torch.float32)\n",
        "        x = torch.randn(rows, cols, device=device, dtype=torch.float32).to(picked)\n",
    )
    text = text.replace('    device = "cuda"\n', '    device = "cuda"\n    picked = mod.pick_dtype()\n')
    runner.write_text(text)
    with pytest.raises(NotImportable, match=r"input 'x' cannot be read: \.to\(\) of a value not read"):
        _read(checkout)


def _per_case(checkout: Path, second: str) -> None:
    """The factors a list in each TEST_SHAPES value, `[0.5, 2]` then `second`, unpacked by name."""
    _write(checkout, factors="factors")
    runner = checkout / FOLDER / "scripts" / "task_runner.py"
    text = runner.read_text().replace(
        "    (4, 64, 2),\n    (8, 256, 3),\n", f"    (4, 64, [0.5, 2]),\n    (8, 256, {second}),\n"
    )
    runner.write_text(text.replace("for i, (rows, cols, k) in", "for i, (rows, cols, factors) in"))


def test_a_list_the_cases_unpack_by_name_is_read_as_its_elements(checkout: Path, tmp_path: Path) -> None:
    """vLLM's triton_mrope: `mrope_section` one list in every case; the reference binds it as a literal."""
    _per_case(checkout, "[0.5, 2]")
    out = tmp_path / "out"
    assert {o.source: o.address or o.reason for o in import_checkout(checkout, out)}[TASK] == ADDRESS
    task = load_task(out, ADDRESS)
    assert dict(task.scalars) == {"factors_0": 0.5, "factors_1": 2}
    kernel_text = (out / FOLDER / "source" / "fake_scale.py").read_text()
    assert kernel_text.endswith(
        "def scale_rows_scalars(x, w, factors_0, factors_1):\n"
        "    return scale_rows(x, w, [factors_0, factors_1], output_dtype=torch.float16)\n"
    )
    assert "    factors = [0.5, 2]\n" in (out / FOLDER / "reference.py").read_text()
    reference = load_module(out / FOLDER / "reference.py")
    copied = load_module(out / FOLDER / "source" / "fake_scale.py")
    x, w = torch.randn(4, 64), torch.rand(64) + 0.5
    want = reference.reference(x, w, factors_0=0.5, factors_1=2)
    assert torch.allclose(copied.scale_rows_scalars(x, w, 0.5, 2).float(), want.float(), atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize(
    ("second", "reason"),
    [
        # Elements that differ by case are case values, but the reference reads the list itself.
        ("[0.5, 3]", "the reference uses 'factors', a value that differs between cases"),
        # Another length, or a list in one case and a tuple in the other: not one list of scalars.
        ("[0.5, 2, 1]", "argument factors=list is not a number or a bool"),
        ("(0.5, 2)", "argument factors=list is not a number or a bool"),
    ],
)
def test_a_list_by_name_that_is_not_one_list_of_scalars_is_refused(checkout: Path, second: str, reason: str) -> None:
    _per_case(checkout, second)
    with pytest.raises(NotImportable, match=re.escape(reason)):
        _read(checkout)

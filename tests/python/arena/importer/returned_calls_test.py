"""rocmbench's `multreduce_matmul_*` spellings, on the fixture's fake_softmax: parametrize values a
function of no parameters returns (`get_target_shapes()`), annotated names (`a: Tensor`), the
reference and the kernel's result through one function picked by a string (`matmul("torch", a, b,
bias)`, arena.importer.returned_calls) and a comparison through a function of the file (`assert
allclose(c_torch, c_triton)`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena.task.tolerance import tolerance_for
from arena_testing.aka_refusal import refusal

TASK = "triton2triton/rocmbench/fake_softmax"
ADDRESS = f"tasks/{TASK}:fake_softmax"
TEST_FILE = Path("tasks") / TASK / "fake_softmax.py"

PICKED = """

def softmax_by(provider, x):
    assert x.dim() == 2, "x must be a matrix"
    if x.dtype == torch.float16:
        assert x.is_contiguous()
    if provider == "torch":
        return torch.softmax(x, axis=1)
    return softmax(x)


def allclose(a, b):
    return torch.allclose(a, b, atol=1e-6)
"""


def _edit(checkout: Path, edits: list[tuple[str, str]]) -> None:
    path = checkout / TEST_FILE
    text = path.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text)


def test_parametrize_values_a_function_returns_are_read(checkout: Path, tmp_path: Path) -> None:
    """`get_target_shapes()`: a function of no parameters that returns a list (built in its body)."""
    _edit(
        checkout,
        [
            (
                "SHAPES = [(4, 16), (8, 32)]\n",
                "def get_shapes():\n    shapes = [(4, 16)]\n    shapes += [(8, 32)]\n    return shapes\n",
            ),
            ('parametrize("M, N", SHAPES)', 'parametrize("M, N", get_shapes())'),
        ],
    )
    out = tmp_path / "out"
    assert {o.source: o.address or o.reason for o in import_checkout(checkout, out)}[TASK] == ADDRESS
    task = load_task(out, ADDRESS)
    assert [dict(c.dims) for c in task.cases] == [{"M": 4, "N": 16}, {"M": 8, "N": 32}]


def test_a_branch_picked_by_a_string_and_a_comparison_through_a_function_are_read(
    checkout: Path, tmp_path: Path
) -> None:
    _edit(
        checkout,
        [
            ("\n\nSHAPES =", f"{PICKED}\n\nSHAPES ="),
            (
                "    x = torch.randn(M, N, device=device) * scale\n",
                "    x: torch.Tensor\n    x = torch.randn(M, N, device=device) * scale\n",
            ),
            ("    y_triton = softmax(x)\n", '    y_triton: torch.Tensor = softmax_by("triton", x)\n'),
            ("    y_torch = torch.softmax(x, axis=1)\n", '    y_torch = softmax_by("torch", x)\n'),
            (
                "    assert torch.allclose(y_triton, y_torch, atol=1e-6), (y_triton, y_torch)\n",
                '    assert allclose(y_triton, y_torch), "mismatch"\n',
            ),
        ],
    )
    out = tmp_path / "out"
    assert {o.source: o.address or o.reason for o in import_checkout(checkout, out)}[TASK] == ADDRESS
    task = load_task(out, ADDRESS)
    assert str(task.entry) == "fake_softmax.py:softmax_by_scalars"  # the kernel's call, its string as written
    kernel_text = (out / TEST_FILE).read_text()
    assert kernel_text.endswith("def softmax_by_scalars(x):\n    return softmax_by('triton', x)\n")
    reference_text = (out / "tasks" / TASK / "reference.py").read_text()
    assert "    y_torch = torch.softmax(x, axis=1)\n" in reference_text  # the branch "torch" takes
    assert tolerance_for(task, "float32").atol == 1e-6  # allclose()'s torch.allclose


def test_a_comparison_function_not_read_as_its_return_is_refused(checkout: Path) -> None:
    """Read by its name alone, the file's allclose() would be torch.allclose with torch's defaults."""
    _edit(
        checkout,
        [
            ("\n\nSHAPES =", f"{PICKED}\n\nSHAPES ="),
            (
                "    return torch.allclose(a, b, atol=1e-6)\n",
                "    a = a.float()\n    return torch.allclose(a, b, atol=1e-6)\n",
            ),
            (
                "    assert torch.allclose(y_triton, y_torch, atol=1e-6), (y_triton, y_torch)\n",
                '    assert allclose(y_triton, y_torch), "mismatch"\n',
            ),
        ],
    )
    assert refusal(checkout, TASK).endswith(
        "the test compares through allclose(), a function of fake_softmax.py that is not one return of a comparison"
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A statement before the branch that changes a value: the call is not its return.
        ('    assert x.dim() == 2, "x must be a matrix"\n', "    x = x.float()\n"),
        # The string given by a name, not written in the call.
        ('    y_torch = softmax_by("torch", x)\n', '    provider = "torch"\n    y_torch = softmax_by(provider, x)\n'),
    ],
)
def test_a_call_not_read_as_its_return_stays_a_call_of_the_kernel(checkout: Path, old: str, new: str) -> None:
    test_a_branch_edits = [
        ("\n\nSHAPES =", f"{PICKED}\n\nSHAPES ="),
        ("    y_triton = softmax(x)\n", '    y_triton = softmax_by("triton", x)\n'),
        ("    y_torch = torch.softmax(x, axis=1)\n", '    y_torch = softmax_by("torch", x)\n'),
    ]
    _edit(checkout, test_a_branch_edits)
    _edit(checkout, [(old, new)])
    assert "the test calls the kernel module twice in one case" in refusal(checkout, TASK)

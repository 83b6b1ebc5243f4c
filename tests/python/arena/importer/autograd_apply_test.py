"""A kernel called through a torch.autograd.Function (arena.importer.autograd_apply): the fixture
fixtures/variants/autograd_softmax.py, put in place of fake_softmax.py, calls `softmax =
_Softmax.apply`, whose forward launches the kernel through a local alias (`kernel =
softmax_kernel`), on an input drawn with `requires_grad=True`. The task's entry is that name, read
as forward without ctx; a forward that reads ctx otherwise, and a test that differentiates, are
refused."""

from __future__ import annotations

import ast
from pathlib import Path

import torch

from arena.importer.autograd_apply import apply_aliases
from arena.importer.draws import find_draw
from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena.task.task import Distribution
from arena_testing.aka_refusal import refusal
from arena_testing.modules import load_module

TASK = "triton2triton/rocmbench/fake_softmax"
ADDRESS = f"tasks/{TASK}:fake_softmax"
FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE = FIXTURES / "checkout" / "tasks" / TASK
VARIANT = FIXTURES / "variants" / "autograd_softmax.py"


def _variant(old: str = "", new: str = "") -> str:
    """fake_softmax.py with the variant's wrapper and test in place of its own."""
    original = (FIXTURE / "fake_softmax.py").read_text()
    header, test = VARIANT.read_text().split("# ---- the test\n")
    wrapper = header.split('"""', 2)[2].strip("\n") + "\n\n\n"
    start, end = original.index("def softmax(x):"), original.index("def set_seed(")
    text = original[:start] + wrapper + original[end:]
    start = text.index('@pytest.mark.parametrize("M, N", SHAPES)\n@pytest.mark.parametrize("scale"')
    end = text.index('@pytest.mark.parametrize("M, N", SHAPES)\ndef test_performance')
    text = text[:start] + test + "\n\n" + text[end:]
    assert old in text
    return text.replace(old, new) if old else text


def _place(checkout: Path, old: str = "", new: str = "") -> None:
    (checkout / "tasks" / TASK / "fake_softmax.py").write_text(_variant(old, new))


def test_the_apply_alias_is_the_entry_read_as_forward(checkout: Path, tmp_path: Path) -> None:
    _place(checkout)
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[TASK].imported, outcomes[TASK].reason
    task = load_task(out, ADDRESS)
    assert str(task.entry) == "fake_softmax.py:softmax"
    assert [(t.name, t.shape, t.dtype, t.dist) for t in task.inputs] == [
        ("x", ("M", "N"), "float32", Distribution("normal", {})),
    ]
    assert [(t.name, t.shape, t.dtype) for t in task.outputs] == [("y_triton", ("M", "N"), "float32")]
    assert dict(task.scalars) == {"scale": 2.0}
    # `apply` takes no keywords: the scalar goes by position, in the test's order (AKA's
    # rocmbench test_flashattention_fwd failed on a GPU, "apply() takes no keyword arguments").
    assert task.abi == ("x", "scale") and task.entry.positional == (0, "scale")
    assert task.signature.startswith("softmax(x: [M, N] float32, scale=")
    assert [(c.name, dict(c.dims)) for c in task.cases] == [
        ("shape1", {"M": 4, "N": 16}),
        ("shape2", {"M": 8, "N": 32}),
    ]
    # The kernel file is copied as AKA wrote it: the alias, the class, its backward.
    assert (out / "tasks" / TASK / "fake_softmax.py").read_text() == _variant()


def test_the_reference_makes_its_tensors_on_the_inputs_device(checkout: Path, tmp_path: Path) -> None:
    _place(checkout)
    out = tmp_path / "out"
    import_checkout(checkout, out)
    text = (out / "tasks" / TASK / "reference.py").read_text()
    assert "'cuda'" not in text and "device=x.device" in text
    reference = load_module(out / "tasks" / TASK / "reference.py")
    x = torch.randn(3, 5)
    assert torch.equal(reference.reference(x, scale=2.0), torch.softmax(x * 2.0, dim=1))


def test_forward_is_read_without_ctx_and_its_bookkeeping() -> None:
    aliases = apply_aliases(ast.parse(_variant()))
    assert list(aliases) == ["softmax"]
    function = aliases["softmax"].function
    assert [a.arg for a in function.args.args] == ["x", "scale"]
    assert "ctx" not in ast.unparse(function)
    assert aliases["softmax"].refusal is None


def test_a_class_that_is_no_autograd_function_is_not_read() -> None:
    text = _variant().replace("class _Softmax(torch.autograd.Function):", "class _Softmax:")
    assert apply_aliases(ast.parse(text)) == {}


def test_a_forward_that_reads_ctx_otherwise_is_the_reason(checkout: Path) -> None:
    _place(checkout, "        ctx.scale = scale\n", "        ctx.mark_dirty(y)\n")
    assert refusal(checkout, TASK) == (
        "_Softmax.forward reads `ctx` beyond keeping values for backward (line 30: `ctx.mark_dirty(y)`)"
    )


def test_a_test_that_differentiates_is_the_reason(checkout: Path) -> None:
    _place(checkout, "    test_case_name = request.node.name\n", "    y_triton.sum().backward()\n")
    assert refusal(checkout, TASK) == (
        "`test_softmax` differentiates through the kernel (line 54: `y_triton.sum().backward()`); "
        "arena checks a kernel's outputs, not gradients"
    )


def test_a_launch_through_a_local_alias_is_found(checkout: Path) -> None:
    """Without the alias the forward launches nothing the file jit-compiles: the call-path search
    finds no kernel."""
    _place(checkout, "        kernel = softmax_kernel\n", "        kernel = other_kernel\n")
    assert (
        refusal(checkout, TASK) == "`test_softmax` calls no function of fake_softmax.py that launches a Triton kernel"
    )


def test_requires_grad_changes_no_draw() -> None:
    for spelled in (
        "torch.randn(4, 8, requires_grad=True)",
        "torch.empty(4, 8).normal_(mean=0.5, std=2.0).requires_grad_()",
    ):
        draw = find_draw("x", ast.parse(spelled, mode="eval").body)
        assert draw.kind == "randn"

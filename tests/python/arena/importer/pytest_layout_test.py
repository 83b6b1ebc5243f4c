"""The rocmbench layout (arena.importer.pytest_layout): the fixture's fake_softmax is a pytest file
that is its own kernel file, with parametrized cases, a function that launches the Triton
kernel, and a stub helper module; the task declares the product of the parametrize lists, calls
that function, and carries the helper the stub names. And the reasons such a file is not
imported."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from arena.importer import task_fields
from arena.importer.fields import TensorField
from arena.importer.importer import import_checkout
from arena.importer.outcome import NotImportable
from arena.task.load import load_task
from arena.task.task import Distribution
from arena.task.tolerance import tolerance_for
from arena_testing.aka_refusal import refusal
from arena_testing.modules import load_module

SOFTMAX_TASK = "triton2triton/rocmbench/fake_softmax"
SOFTMAX_ADDRESS = f"tasks/{SOFTMAX_TASK}:fake_softmax"
TEST_FILE = Path("tasks") / SOFTMAX_TASK / "fake_softmax.py"


def _edit(checkout: Path, old: str, new: str) -> None:
    path = checkout / TEST_FILE
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _reason(checkout: Path) -> str:
    return refusal(checkout, SOFTMAX_TASK)


def test_the_parametrized_cases_and_the_launching_function_are_declared(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[SOFTMAX_TASK].address == SOFTMAX_ADDRESS
    task = load_task(out, SOFTMAX_ADDRESS)
    assert str(task.entry) == "fake_softmax.py:softmax"  # the function that launches softmax_kernel
    assert task.baseline == ("fake_softmax.py",)
    assert [(t.name, t.shape, t.dtype, t.dist) for t in task.inputs] == [
        ("x", ("M", "N"), "float32", Distribution("normal", {"std": 2.0})),
    ]
    assert [(t.name, t.shape, t.dtype) for t in task.outputs] == [("y_triton", ("M", "N"), "float32")]
    # SHAPES times [2.0] (the scale), each seeded as set_seed() seeds: its default, 42.
    assert [(c.name, dict(c.dims), c.seed, c.timed) for c in task.cases] == [
        ("shape1", {"M": 4, "N": 16}, 42, False),
        ("shape2", {"M": 8, "N": 32}, 42, True),
    ]
    assert tolerance_for(task, "float32").atol == 1e-6 and tolerance_for(task, "float32").rtol == 1e-5


def test_the_stub_helper_is_the_checkout_s_file_it_names(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    folder = out / "tasks" / SOFTMAX_TASK
    assert (folder / "perf_helpers.py").read_bytes() == (checkout / "src" / "tools" / "perf_helpers.py").read_bytes()
    assert load_task(out, SOFTMAX_ADDRESS).sources == ("reference.py", "perf_helpers.py")


def test_a_stub_whose_file_the_checkout_lacks_is_the_reason(checkout: Path) -> None:
    (checkout / "src" / "tools" / "perf_helpers.py").unlink()
    assert (
        _reason(checkout)
        == "perf_helpers.py is a stub generated from src/tools/perf_helpers.py, which the checkout lacks"
    )


def test_the_reference_is_the_test_s(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    reference = load_module(out / "tasks" / SOFTMAX_TASK / "reference.py")
    x = torch.randn(3, 5)
    assert torch.equal(reference.reference(x), torch.softmax(x, dim=1))
    # What records the outputs for AKA's report (request, result_gold) is not part of it.
    assert "request" not in (out / "tasks" / SOFTMAX_TASK / "reference.py").read_text()


def test_two_correctness_tests_are_not_imported(checkout: Path) -> None:
    config = checkout / "tasks" / SOFTMAX_TASK / "config.yaml"
    config.write_text(
        config.read_text().replace(' -k "not test_performance and not test_save_performance_results"', "")
    )
    _edit(checkout, "    bench(lambda: softmax(x))", "    assert torch.allclose(softmax(x), torch.softmax(x, dim=1))")
    assert (
        _reason(checkout)
        == "fake_softmax.py has 2 correctness tests (test_softmax, test_performance); the importer reads one"
    )


def test_a_fixture_the_importer_does_not_read_is_the_reason(checkout: Path) -> None:
    _edit(checkout, 'request, device="cuda"', "request, device")
    assert _reason(checkout) == "`test_softmax` takes 'device', a fixture the importer does not read"


def test_parametrize_values_from_a_function_are_not_read(checkout: Path) -> None:
    _edit(
        checkout,
        '@pytest.mark.parametrize("M, N", SHAPES)\n@pytest.mark.parametrize("scale"',
        '@pytest.mark.parametrize("M, N", sorted(SHAPES))\n@pytest.mark.parametrize("scale"',
    )
    assert _reason(checkout).startswith("`test_softmax`'s parametrize values cannot be read: `sorted(SHAPES)`")


_BY_DTYPE = (
    '@pytest.mark.parametrize("M, N", SHAPES)\n@pytest.mark.parametrize("scale", [2.0])\n'
    'def test_softmax(M, N, scale, request, device="cuda"):\n    set_seed()\n'
    "    x = torch.randn(M, N, device=device) * scale\n",
    '@pytest.mark.parametrize("M, N", SHAPES)\n@pytest.mark.parametrize("dtype_str", ["fp32", "fp16"])\n'
    'def test_softmax(M, N, dtype_str, request, device="cuda"):\n    set_seed()\n'
    '    if dtype_str == "fp32":\n        dtype = torch.float32\n    else:\n        dtype = torch.float16\n'
    "    x = torch.randn(M, N, device=device, dtype=DTYPE) * 2.0\n",
)


def test_a_float_dtype_that_differs_between_cases_is_the_case_dtype(checkout: Path, tmp_path: Path) -> None:
    """rocmbench `test_kernel_sub`: `@pytest.mark.parametrize("dtype_str", ["fp32", "fp16"])`, the
    tensors drawn in that dtype: `$dtype` tensors, each case's dtype, the test's tolerance under
    both, and a reference that returns its result in the input's dtype."""
    _edit(checkout, _BY_DTYPE[0], _BY_DTYPE[1].replace("DTYPE", "dtype"))
    _edit(checkout, "atol=1e-6)", "atol=1e-3)")
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[SOFTMAX_TASK].address == SOFTMAX_ADDRESS, outcomes[SOFTMAX_TASK].reason
    task = load_task(out, SOFTMAX_ADDRESS)
    assert [(t.name, t.dtype) for t in task.inputs + task.outputs] == [("x", "$dtype"), ("y_triton", "$dtype")]
    assert sorted((dict(c.dims)["M"], c.dtype) for c in task.cases) == [
        (4, "float16"),
        (4, "float32"),
        (8, "float16"),
        (8, "float32"),
    ]
    for dtype in ("float16", "float32"):
        assert tolerance_for(task, dtype).atol == 1e-3
    reference = load_module(out / "tasks" / SOFTMAX_TASK / "reference.py")
    x = torch.randn(4, 16, dtype=torch.float16)
    assert reference.reference(x).dtype == torch.float16


def test_tensors_whose_dtypes_differ_unalike_between_cases_are_not_imported() -> None:
    """One tensor float32 where another is float16, in the same case: arena has one dtype per case."""
    x = TensorField("x", ("M",), "$dtype", case_dtypes=("float32", "float16"))
    y = TensorField("y", ("M",), "$dtype", case_dtypes=("float16", "float16"))
    assert task_fields.case_dtypes_of((x, x)) == ("float32", "float16")
    with pytest.raises(NotImportable, match="have dtypes that differ between cases, not alike"):
        task_fields.case_dtypes_of((x, y))


def test_an_integer_dtype_that_differs_between_cases_is_not_imported(checkout: Path) -> None:
    """int32 in one case, int64 in another: `$dtype` is for float dtypes."""
    by_dtype = _BY_DTYPE[1].replace("torch.float32", "torch.int32").replace("torch.float16", "torch.int64")
    _edit(
        checkout,
        _BY_DTYPE[0],
        by_dtype.replace(
            "torch.randn(M, N, device=device, dtype=DTYPE) * 2.0",
            "torch.randint(0, 5, (M, N), device=device, dtype=dtype)",
        ),
    )
    assert _reason(checkout) == "input 'x' has dtypes int32, int64 in different cases"


@pytest.mark.parametrize(
    "mark, read",
    [
        ("@pytest.mark.interpreter", True),
        ('@pytest.mark.skipif(torch.cuda.get_device_capability()[0] < 9, reason="sm_90")', True),
        ("@pytest.mark.skipif(torch.cuda.get_device_capability()[0] < 10, reason='sm_100')", False),
        ("@pytest.mark.skipif(not is_hip(), reason='HIP only')", False),
        ("@pytest.mark.slow", False),
    ],
)
def test_marks_that_leave_the_test_running_on_arena_s_gpus_are_read(
    checkout: Path, tmp_path: Path, mark: str, read: bool
) -> None:
    """`interpreter` and a skip below compute capability 9 (sm_90 and gfx942 are 9.x) leave the
    test as it runs on arena's GPUs; any other mark (a skip arena cannot decide) is the reason."""
    _edit(
        checkout,
        '@pytest.mark.parametrize("M, N", SHAPES)\n@pytest.mark.parametrize("scale"',
        f'{mark}\n@pytest.mark.parametrize("M, N", SHAPES)\n@pytest.mark.parametrize("scale"',
    )
    outcomes = {o.source: o for o in import_checkout(checkout, tmp_path / "out")}
    if read:
        assert outcomes[SOFTMAX_TASK].address == SOFTMAX_ADDRESS, outcomes[SOFTMAX_TASK].reason
    else:
        assert outcomes[SOFTMAX_TASK].reason == f"`test_softmax` is marked `{mark[1:][:60]}`"

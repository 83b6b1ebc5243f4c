"""A pytest test that launches its `@triton.jit` kernel itself (arena.importer.launch): the launch,
and the grid only it reads, become a function written beside the kernel file, which the task calls;
the test's other statements stay the test's. The fixture's fake_softmax test is edited to launch
`softmax_kernel[grid](...)` as rocmbench's `test_add_kernel` does."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import torch

from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena.task.task import Task
from arena.task.tolerance import tolerance_for
from arena_testing.aka_refusal import refusal
from arena_testing.modules import load_module

TASK = "triton2triton/rocmbench/fake_softmax"
ADDRESS = f"tasks/{TASK}:fake_softmax"
TEST_FILE = Path("tasks") / TASK / "fake_softmax.py"

_CALLED = "    y_triton = softmax(x)\n"
_LAUNCHED = (
    "    y_triton = torch.empty(M, N, device=device)\n"
    "    grid = lambda meta: (M,)\n"
    "    softmax_kernel[grid](y_triton, x, N, BLOCK=BLOCK)\n"
)


def _edit(checkout: Path, *pairs: tuple[str, str]) -> None:
    path = checkout / TEST_FILE
    text = path.read_text()
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new)
    path.write_text(text)


def _launching(checkout: Path, *more: tuple[str, str]) -> None:
    _edit(
        checkout,
        (_CALLED, _LAUNCHED),
        ('@pytest.mark.parametrize("scale", [2.0])', '@pytest.mark.parametrize("scale, BLOCK", [(2.0, 32)])'),
        ("def test_softmax(M, N, scale, request", "def test_softmax(M, N, scale, BLOCK, request"),
        *more,
    )


def _imported(checkout: Path, out: Path) -> Task:
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[TASK].address == ADDRESS, outcomes[TASK].reason
    return load_task(out, ADDRESS)


def _reason(checkout: Path) -> str:
    return refusal(checkout, TASK)


def test_the_launch_is_a_function_beside_the_kernel_file_that_the_task_calls(checkout: Path, tmp_path: Path) -> None:
    _launching(checkout)
    task = _imported(checkout, tmp_path / "out")
    assert str(task.entry) == "arena_launch.py:softmax_kernel_launch"
    assert task.baseline == ("fake_softmax.py", "arena_launch.py")
    # The tensors by position (the buffer it writes is an input written in place), the rest by name.
    assert [t.name for t in task.inputs] == ["y_triton", "x"]
    assert [(t.name, t.inplace) for t in task.outputs] == [("y_triton", True)]
    assert dict(task.scalars) == {"M": "M", "N": "N", "BLOCK": "BLOCK"}
    assert [(c.name, dict(c.dims)) for c in task.cases][0] == ("shape1", {"M": 4, "N": 16, "BLOCK": 32})


def test_the_function_launches_the_kernel_as_the_test_does(checkout: Path, tmp_path: Path) -> None:
    _launching(checkout)
    out = tmp_path / "out"
    import_checkout(checkout, out)
    folder = out / "tasks" / TASK
    launches = []

    class Kernel:  # stands in for the @triton.jit kernel: records the grid and the arguments
        def __getitem__(self, grid):
            return lambda *args, **kwargs: launches.append((grid({}) if callable(grid) else grid, args, kwargs))

    stand_in = types.ModuleType("fake_softmax")
    stand_in.softmax_kernel = Kernel()  # type: ignore[attr-defined]
    sys.modules["fake_softmax"] = stand_in
    try:
        adapter = load_module(folder / "arena_launch.py")
    finally:
        del sys.modules["fake_softmax"]
    y, x = torch.zeros(4, 16), torch.randn(4, 16)
    assert adapter.softmax_kernel_launch(y, x, M=4, N=16, BLOCK=32) is None
    [(grid, args, kwargs)] = launches
    assert grid == (4,) and args[0] is y and args[1] is x and args[2] == 16 and kwargs == {"BLOCK": 32}
    # The grid moved into the function; the test's reference stays in reference.py.
    assert "grid" not in (folder / "reference.py").read_text()


def test_a_name_the_launch_shares_with_the_reference_stays_a_parameter(checkout: Path, tmp_path: Path) -> None:
    """`rows` is read by the launch's grid and by the test's reference: it stays the test's, and
    the function takes it (by name); the grid, which only the launch reads, moves."""
    _launching(checkout, ("    grid = lambda meta: (M,)\n", "    rows = M\n    grid = lambda meta: (rows,)\n"))
    _edit(checkout, ("y_torch = torch.softmax(x, axis=1)", "y_torch = torch.softmax(x, axis=1) * (rows // M)"))
    out = tmp_path / "out"
    task = _imported(checkout, out)
    text = (out / "tasks" / TASK / "arena_launch.py").read_text()
    assert "def softmax_kernel_launch(y_triton, x, *, rows, N, BLOCK):" in text
    assert "grid = lambda meta: (rows,)" in text and "rows = M" not in text
    assert "rows" in dict(task.scalars)


def test_a_name_neither_the_test_nor_the_kernel_file_binds_is_the_reason(checkout: Path) -> None:
    _launching(checkout, ("softmax_kernel[grid](y_triton, x, N, BLOCK=BLOCK)", "softmax_kernel[grid](y, x, N)"))
    assert (
        _reason(checkout)
        == "the launch of `softmax_kernel` reads 'y', which neither the test nor fake_softmax.py binds"
    )


def test_a_launch_inside_a_loop_is_not_wrapped(checkout: Path) -> None:
    _launching(
        checkout,
        (
            "    softmax_kernel[grid](y_triton, x, N, BLOCK=BLOCK)\n",
            "    for _ in range(2):\n        softmax_kernel[grid](y_triton, x, N, BLOCK=BLOCK)\n",
        ),
    )
    assert _reason(checkout) == (
        "`test_softmax` launches `softmax_kernel[grid](...)` inside `for _ in range(2):`; the importer wraps one launch"
    )


def test_an_elementwise_equality_is_an_exact_comparison_and_one_case_is_also_timed(
    checkout: Path, tmp_path: Path
) -> None:
    """`assert (y == ref).all()` compares the whole output exactly; a test with one case declares it
    checked (a CPU checks it) and again timed."""
    _launching(
        checkout,
        (
            "assert torch.allclose(y_triton, y_torch, atol=1e-6), (y_triton, y_torch)",
            "assert (y_triton == y_torch).all()",
        ),
        (
            '@pytest.mark.parametrize("M, N", SHAPES)\n@pytest.mark.parametrize("scale',
            '@pytest.mark.parametrize("M, N", [(4, 16)])\n@pytest.mark.parametrize("scale',
        ),
    )
    task = _imported(checkout, tmp_path / "out")
    assert (tolerance_for(task, "float32").atol, tolerance_for(task, "float32").rtol) == (0.0, 0.0)
    assert [(c.name, dict(c.dims), c.timed) for c in task.cases] == [
        ("shape1", {"M": 4, "N": 16, "BLOCK": 32}, False),
        ("shape1_timed", {"M": 4, "N": 16, "BLOCK": 32}, True),
    ]


def test_assert_close_of_a_float32_output_and_a_float16_reference_takes_the_looser_default(
    checkout: Path, tmp_path: Path
) -> None:
    """torch.testing.assert_close(check_dtype=False) without a tolerance compares within the
    default of the looser dtype: float16's (atol 1e-5, rtol 1e-3), declared under float32."""
    _launching(
        checkout,
        ("y_torch = torch.softmax(x, axis=1)", "y_torch = torch.softmax(x.half(), axis=1)"),
        (
            "assert torch.allclose(y_triton, y_torch, atol=1e-6), (y_triton, y_torch)",
            "torch.testing.assert_close(y_triton, y_torch, check_dtype=False)",
        ),
    )
    task = _imported(checkout, tmp_path / "out")
    assert (tolerance_for(task, "float32").atol, tolerance_for(task, "float32").rtol) == (1e-5, 1e-3)

"""Reading a task runner's correctness test, and the reasons a test is not imported.

Each case below is the fixture's fake_scale runner with one change, read end to end by read_task
on a copy of the fake checkout."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from arena.importer.checkout import find_tasks
from arena.importer.draws import distribution, find_draw
from arena.importer.importer import import_checkout, read_task
from arena.importer.outcome import NotImportable
from arena.task.load import load_task
from arena_testing.modules import load_module

RUNNER = Path("tasks/triton2triton/vllm/fake_scale/scripts/task_runner.py")
SCALE_TASK = "triton2triton/vllm/fake_scale"
SCALE_ADDRESS = f"tasks/{SCALE_TASK}:fake_scale"
DRAW_X = "x = torch.randn(rows, cols, device=device, dtype=dtype)"
DRAW_W = "w = torch.rand(cols, device=device, dtype=torch.float32) * 2 + 0.5"
CALL = "result = mod.scale_rows(x, w, alpha=ALPHA)"


def _read_scale_task(checkout: Path) -> dict[str, bytes]:
    [task] = [t for t in find_tasks(checkout) if t.name.endswith("fake_scale")]
    return read_task(task, checkout).files


def _files_after(checkout: Path, old: str, new: str) -> dict[str, bytes]:
    runner = checkout / RUNNER
    runner.write_text(runner.read_text().replace(old, new))
    return _read_scale_task(checkout)


def _reason_after(checkout: Path, old: str, new: str) -> str:
    runner = checkout / RUNNER
    text = runner.read_text()
    assert old in text
    runner.write_text(text.replace(old, new))
    with pytest.raises(NotImportable) as caught:
        _read_scale_task(checkout)
    return str(caught.value)


@pytest.mark.parametrize(
    "old, new, reason",
    [
        ("TEST_SHAPES = [", "SEEDS = [", "scripts/task_runner.py has no TEST_SHAPES list"),
        (
            "enumerate(TEST_SHAPES)",
            "enumerate(SEEDS)",
            "run_correctness() loops over `enumerate(SEEDS)`, not over TEST_SHAPES",
        ),
        (
            DRAW_X,
            f"{DRAW_X}\n            for r in range(rows):\n                x[r] = r",
            "input 'x' is written by line 47, `for r in range(rows):`, which no arena distribution matches",
        ),
        (DRAW_X, f"{DRAW_X}\n            x[0] = 0", "input 'x' is changed after it is drawn (line 47: `x[0] = 0`)"),
        (
            DRAW_X,
            "x = torch.arange(rows * cols, device=device).view(rows, cols) ** 2",
            "input 'x' is `torch.arange(rows * cols, device=device).view(rows, cols) ** 2`, "
            "which no arena distribution matches",
        ),
        (
            CALL,
            "result, extra = mod.scale_rows(x, w, alpha=ALPHA)",
            "`mod.scale_rows` returns 2 tensors and the test compares 1 of them (result); arena checks every output",
        ),
        (CALL, "result = mod.scale_rows(x, w, alpha=(1, (2, 3)))", "argument alpha_1=tuple is not a number or a bool"),
        (
            CALL,
            # a bool in one case and a number in the other (a bool in every case is given by its index)
            "result = mod.scale_rows(x, w, alpha=i > 0 or 0.5)",
            "argument alpha=`i > 0 or 0.5` is a bool that differs between cases",
        ),
        (CALL, "result = mod.scale_rows(x, w, alpha=ALPHA, extra=1)", "`scale_rows` takes no argument 'extra'"),
        (
            "ref = reference_scale(x, w, ALPHA)",
            "ref = reference_scale(x, w, ALPHA) * i",
            "the reference uses 'i', a value that differs between cases, and the kernel is not given it",
        ),
        (
            "ref = reference_scale(x, w, ALPHA)",
            "ref = reference_scale(result, w, ALPHA)",
            "the reference is computed from the kernel's output",
        ),
        (
            "torch.allclose(result, ref,",
            "torch.allclose(result[0], ref,",
            "does not compare the whole output 'result' with a reference",
        ),
    ],
)
def test_a_test_the_importer_cannot_read_says_why(checkout: Path, old: str, new: str, reason: str) -> None:
    assert reason in _reason_after(checkout, old, new)


@pytest.mark.parametrize("default", ["", " = 0.5"])  # positional before a tensor: kept, default or not
def test_a_tensor_after_a_number_is_called_in_the_abi_order(checkout: Path, default: str) -> None:
    kernel = checkout / RUNNER.parent.parent / "source" / "fake_scale.py"
    old = "def scale_rows(x: torch.Tensor, w: torch.Tensor, alpha: float = 1.0)"
    kernel.write_text(
        kernel.read_text().replace(old, f"def scale_rows(x: torch.Tensor, alpha: float{default}, w=None)")
    )
    files = _files_after(checkout, CALL, "result = mod.scale_rows(x, ALPHA, w)")
    build = files["BUILD"].decode()
    assert "abi=['x', 'alpha', 'w']," in build and "scalars={'alpha': 0.5}," in build
    assert "scale_rows(x: [rows, cols] float16, alpha=0.5, w: [cols] float32) ->" in build
    # the reference keeps arena's convention, reference(*inputs, **scalars)
    assert "def reference(x, w, *, alpha):" in files["reference.py"].decode()


def test_a_bool_argument_is_a_flag_scalar(checkout: Path) -> None:
    files = _files_after(checkout, CALL, "result = mod.scale_rows(x, w, alpha=True)")
    build = files["BUILD"].decode()
    assert "scalars={'alpha': True}," in build and "*, alpha=True) ->" in build
    assert "def reference(x, w, *, alpha):" in files["reference.py"].decode()


def test_a_loop_that_computes_the_reference_is_repeated_in_it(checkout: Path) -> None:
    old = "            ref = reference_scale(x, w, ALPHA)\n"
    new = (
        "            ref = torch.zeros_like(x)\n"
        "            for r in range(rows):\n"
        "                ref[r] = reference_scale(x[r], w, ALPHA)\n"
    )
    reference = _files_after(checkout, old, new)["reference.py"].decode()
    assert "    for r in range(rows):\n        ref[r] = reference_scale(x[r], w, ALPHA)\n" in reference
    assert "    rows = x.shape[0]\n" in reference  # the loop's bound, read from the input; `r` is its own


@pytest.mark.parametrize(
    "draw, declared",
    [
        (
            "torch.arange(cols, device=device, dtype=torch.float32) * 0.5 + 1",
            "{'name': 'w', 'shape': ['cols'], 'dtype': 'float32', 'dist': {'kind': 'arange', 'start': 1, 'step': 0.5}}",
        ),
        (
            "torch.randperm(cols * 4, device=device)[:cols].to(torch.float32)",
            "{'name': 'w', 'shape': ['cols'], 'dtype': 'float32', "
            "'dist': {'kind': 'permutation', 'low': 0, 'high': 256}}",  # cols * 4: each case's own (below)
        ),
        (
            "torch.randn(cols, device=device, dtype=torch.float32).abs() * 0.1 + 0.01",
            "{'name': 'w', 'shape': ['cols'], 'dtype': 'float32', 'dist': {'kind': 'half_normal', 'std': 0.1, 'low': 0.01}}",
        ),
        (
            "torch.cumsum(torch.rand(cols, device=device, dtype=torch.float32) * -0.1, dim=-1)",
            "{'name': 'w', 'shape': ['cols'], 'dtype': 'float32', "
            "'dist': {'kind': 'cumsum', 'base': 'uniform', 'dim': -1, 'low': -0.1, 'high': 0.0}}",
        ),
        (
            "torch.cumsum(torch.randint(1, rows, (cols,), device=device), dim=0).to(torch.int32)",
            "{'name': 'w', 'shape': ['cols'], 'dtype': 'int32', "
            "'dist': {'kind': 'cumsum', 'base': 'randint', 'dim': 0, 'low': 1, 'high': 'rows'}}",
        ),
    ],
)
def test_an_arange_permutation_half_normal_or_cumsum_input_is_declared(
    checkout: Path, draw: str, declared: str
) -> None:
    assert declared in _files_after(checkout, DRAW_W, f"w = {draw}")["BUILD"].decode()


def test_a_randint_bound_no_dim_names_is_each_cases_number_not_a_dim(checkout: Path) -> None:
    # `rows + 1` differs by case: a dim of its own would be "free" (odd) for validation's hidden
    # variants, moved alone past the rows it was computed from; each case's number stays tied.
    build = _files_after(checkout, DRAW_W, "w = torch.randint(0, rows + 1, (cols,), device=device, dtype=torch.int32)")
    text = build["BUILD"].decode()
    assert "'dist': {'kind': 'randint', 'low': 0, 'high': 5}}" in text
    assert "'dists': {'w': {'kind': 'randint', 'low': 0, 'high': 9}}" in text
    assert "'dists': {'w': {'kind': 'randint', 'low': 0, 'high': 17}}" in text
    assert "w_high" not in text


def test_an_integer_input_a_loop_fills_with_a_progression_is_an_arange(checkout: Path) -> None:
    fill = "w = torch.zeros(cols, device=device, dtype=torch.int32)\n            for j in range(cols):\n"
    build = _files_after(checkout, DRAW_W, fill + "                w[j] = j * rows")["BUILD"].decode()
    assert "{'name': 'w', 'shape': ['cols'], 'dtype': 'int32', 'dist': {'kind': 'arange', 'step': 4}}" in build
    assert "'dists': {'w': {'kind': 'arange', 'step': 8}}" in build


def test_an_integer_grid_a_nested_loop_fills_with_its_row_major_index_is_an_arange(checkout: Path) -> None:
    """`block_table[s, b] = s * num_blocks_per_seq + b` (vllm `triton_unified_attention_2d`)."""
    fill = (
        "w = torch.zeros(rows, cols, device=device, dtype=torch.int32)\n"
        "            for s in range(rows):\n"
        "                for b in range(cols):\n"
        "                    w[s, b] = s * cols + b"
    )
    build = _files_after(checkout, DRAW_W, fill)["BUILD"].decode()
    assert "{'name': 'w', 'shape': ['rows', 'cols'], 'dtype': 'int32', 'dist': {'kind': 'arange'}}" in build


def test_a_float_scalar_that_differs_by_case_is_a_case_value(checkout: Path, tmp_path: Path) -> None:
    """`alpha = 1.0 / cols ** 0.5` (vllm's `scale = 1.0 / (head_size ** 0.5)`): the scalar names a
    dim that each case sets to the test's float."""
    runner = checkout / RUNNER
    text = runner.read_text()
    assert CALL in text and "reference_scale(x, w, ALPHA)" in text
    text = text.replace(CALL, f"alpha = 1.0 / cols ** 0.5\n            {CALL.replace('ALPHA', 'alpha')}")
    runner.write_text(text.replace("reference_scale(x, w, ALPHA)", "reference_scale(x, w, alpha)"))
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[SCALE_TASK].address == SCALE_ADDRESS, outcomes[SCALE_TASK].reason
    task = load_task(out, SCALE_ADDRESS)
    assert task.scalars == {"alpha": "alpha"}
    assert [case.dims["alpha"] for case in task.cases] == [1.0 / 64**0.5, 1.0 / 256**0.5, 1.0 / 128**0.5]
    reference = load_module(out / "tasks" / SCALE_TASK / "reference.py")
    x, w = torch.randn(4, 64, dtype=torch.float16), torch.rand(64)
    assert torch.equal(reference.reference(x, w, alpha=0.125), (x.float() * w * 0.125).to(torch.float16))


def test_a_reference_shaped_like_the_output_is_given_a_stand_in_of_its_shape(checkout: Path) -> None:
    old = "ref = reference_scale(x, w, ALPHA)"
    reference = _files_after(checkout, old, f"ref = torch.zeros_like(result) + {old[6:]}")["reference.py"].decode()
    assert "    result = torch.empty((x.shape[0], x.shape[1]), dtype=torch.float16, device=x.device)\n" in reference
    assert "the reference is computed from the kernel's output" in _reason_after(
        checkout, "torch.zeros_like(result)", "torch.zeros_like(result) * result.sum()"
    )


def test_an_argument_the_test_compares_beside_what_the_kernel_returns_is_written_in_place(checkout: Path) -> None:
    compared = '                return False, f"Shape {i + 1}: mismatch"\n'
    runner = checkout / RUNNER
    text = runner.read_text().replace(CALL, f"w_before = w.clone()\n            {CALL}")
    text = text.replace("reference_scale(x, w, ALPHA)", "reference_scale(x, w_before, ALPHA)")
    runner.write_text(text.replace(compared, f"{compared}            assert torch.equal(w, w_before)\n"))
    files = _read_scale_task(checkout)
    assert (
        "outputs=[{'name': 'result', 'shape': ['rows', 'cols'], 'dtype': 'float16'}, {'name': 'w', 'inplace': True}]"
        in (files["BUILD"].decode())
    )
    reference = files["reference.py"].decode()
    assert "    w_before = w.clone()\n" in reference and "    w.copy_((w_before).to(device=x.device" in reference


def test_an_integer_arange_scaled_by_a_fraction_is_refused() -> None:
    draw = find_draw("x", ast.parse("torch.arange(n, dtype=torch.int32) * 2.5", mode="eval").body)
    with pytest.raises(NotImportable, match="scales an integer torch.arange by 2.5"):
        distribution(draw, "x", lambda node: ast.literal_eval(node))


def test_an_input_that_copies_a_draw_is_that_draw_and_the_reference_reads_its_copy(checkout: Path) -> None:
    runner = checkout / RUNNER
    text = runner.read_text().replace(DRAW_X, DRAW_X.replace("x =", "x0 =") + "\n            x = x0.clone()")
    runner.write_text(text.replace("ref = reference_scale(x, w, ALPHA)", "ref = reference_scale(x0, w, ALPHA)"))
    files = _read_scale_task(checkout)
    assert "{'name': 'x', 'shape': ['rows', 'cols'], 'dtype': 'float16', 'dist': {'kind': 'normal'}}" in (
        files["BUILD"].decode()
    )
    assert "    x0 = x.clone()\n" in files["reference.py"].decode()


@pytest.mark.parametrize(
    "new, reason",
    [
        ("x = torch.randn(rows, cols, device=device, dtype=dtype)\n            y = x.clone()", "is a copy of 'x'"),
        (
            "x0 = torch.randn(rows, cols, device=device)\n            x = x0.to(dtype)",
            "the reference reads 'x0', whose cast the kernel is given as 'x'",
        ),
    ],
)
def test_a_copy_the_reference_cannot_be_given_is_refused(checkout: Path, new: str, reason: str) -> None:
    runner = checkout / RUNNER
    text = runner.read_text().replace(DRAW_X, new)
    if "y = x.clone()" in new:
        text = text.replace(CALL, "result = mod.scale_rows(x, y, alpha=ALPHA)")
    else:
        text = text.replace("ref = reference_scale(x, w, ALPHA)", "ref = reference_scale(x0, w, ALPHA)")
    runner.write_text(text)
    with pytest.raises(NotImportable, match=reason):
        _read_scale_task(checkout)


def test_the_kernel_default_is_not_passed_and_a_compared_cast_is_kept(checkout: Path) -> None:
    runner = checkout / RUNNER
    text = runner.read_text().replace("alpha=ALPHA)", "alpha=1.0)")
    runner.write_text(text.replace("torch.allclose(result, ref,", "torch.allclose(result.float(), ref.float(),"))
    files = _read_scale_task(checkout)
    assert b"scalars={}," in files["BUILD"]
    assert b"return (ref).to(device=x.device, dtype=torch.float16)" in files["reference.py"]


@pytest.mark.parametrize(
    "source, dist",
    [
        ("torch.randn(n, device=d) * 0.1", {"kind": "normal", "std": 0.1}),
        ("torch.randn(n) * 2 - 1", {"kind": "normal", "mean": -1.0, "std": 2.0}),
        ("torch.rand(n, dtype=torch.float32) * 2 + 0.5", {"kind": "uniform", "low": 0.5, "high": 2.5}),
        ("torch.zeros(n, n)", {"kind": "constant", "value": 0.0}),
        ("torch.full((n,), 3, dtype=torch.int32)", {"kind": "constant", "value": 3.0}),
        ("torch.randint(0, 256, (n, n)).to(torch.uint8)", {"kind": "randint", "low": 0, "high": "256"}),
        ("-torch.rand(n, device=d) * 0.5", {"kind": "uniform", "low": -0.5, "high": 0.0}),
        ("-torch.randn(n) * 0.5", {"kind": "normal", "std": 0.5}),
        ("torch.arange(n, dtype=torch.int32)", {"kind": "arange"}),
        ("torch.arange(2, n) * 3 + 1", {"kind": "arange", "start": 7, "step": 3}),
        ("torch.arange(0, n, 0.5)", {"kind": "arange", "step": 0.5}),
        ("torch.randperm(64, dtype=torch.int32)[:n]", {"kind": "permutation", "low": 0, "high": "64"}),
        ("torch.randn(n).abs()", {"kind": "half_normal"}),
        ("torch.randn(n, device=d).abs() * 0.1 + 0.01", {"kind": "half_normal", "std": 0.1, "low": 0.01}),
        ("torch.abs(-torch.randn(n) * 0.5).contiguous()", {"kind": "half_normal", "std": 0.5}),
        ("2 * torch.randn(n).abs() - 1", {"kind": "half_normal", "std": 2.0, "low": -1.0}),
        ("torch.randn(b, t).cumsum(1) * 0.01", {"kind": "cumsum", "base": "normal", "dim": 1, "std": 0.01}),
        (
            "torch.cumsum(torch.randn(b, t) * 0.01, dim=-1)",
            {"kind": "cumsum", "base": "normal", "dim": -1, "std": 0.01},
        ),
        ("-torch.rand(n).cumsum(0) * 0.1", {"kind": "cumsum", "base": "uniform", "dim": 0, "low": -0.1, "high": 0.0}),
        (
            "torch.cumsum(torch.randint(1, 5, (n,)), 0)",
            {"kind": "cumsum", "base": "randint", "dim": 0, "low": 1, "high": "5"},
        ),
        ("torch.full((n,), 2).cumsum(dim=0)", {"kind": "cumsum", "base": "constant", "dim": 0, "value": 2.0}),
        ("torch.zeros_like(y)", {"kind": "constant", "value": 0.0}),
        ("torch.full_like(y, 2.5)", {"kind": "constant", "value": 2.5}),
        ("torch.randn_like(y) * 3", {"kind": "normal", "std": 3.0}),
    ],
)
def test_draws_become_arena_distributions(source: str, dist: dict) -> None:
    draw = find_draw("x", ast.parse(source, mode="eval").body)
    found = distribution(draw, "x", lambda node: ast.literal_eval(node))
    if found["kind"] in ("randint", "permutation") or found.get("base") == "randint":
        found["high"] = ast.unparse(found["high"])  # a bound is left as the expression, to be read per case
    assert found == dist


@pytest.mark.parametrize(
    "source, reason",
    [
        ("torch.randn(n).sin()", "`torch.randn(n).sin()`, which no arena distribution matches"),
        # (a cumsum of another tensor, `torch.cumsum(dt * -0.1, dim=-1)`, is cumsum_of it: derived_input_test.py)
        ("torch.cumsum(dt.sin(), dim=-1)", "the cumsum of `dt.sin()`, which no arena distribution draws"),
        ("torch.randn(n).cumsum(0).abs()", "the abs of `torch.randn(n).cumsum(0)`, which no arena distribution"),
        ("torch.randn(n).cumsum(0, dtype=torch.float64)", "which no arena distribution matches"),
        ("torch.randint(0, 9, (n,)) * 2", "scales or shifts random integers"),
        ("torch.randn(n, generator=g)", "is drawn with generator=, which arena does not model"),
        ("torch.randperm(n)", "is a whole torch.randperm"),
        ("torch.randn(n)[:4]", "is a slice of a draw"),
        ("-torch.randint(0, 9, (n,))", "scales or shifts random integers"),
    ],
)
def test_draws_no_distribution_matches_are_refused(source: str, reason: str) -> None:
    with pytest.raises(NotImportable, match=reason.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        find_draw("x", ast.parse(source, mode="eval").body)


@pytest.mark.parametrize(
    "source, reason",
    [
        ("torch.rand(n).abs()", "the magnitude of a draw other than a normal one centred on 0"),
        ("(torch.randn(n) + 1).abs()", "the magnitude of a draw other than a normal one centred on 0"),
        ("-torch.randn(n).abs()", "scales a half-normal draw by -1"),
        ("torch.randn(n).cumsum(0) + 1", "shifts a cumulative sum"),
        ("torch.randint(0, 9, (n,)).cumsum(0) * 2", "scales the cumulative sum of a randint draw by 2"),
        ("torch.randn(n).cumsum(0.5)", "a cumulative sum along 0.5, not one axis"),
        ("torch.arange(n).cumsum(0)", "a cumulative sum of arange values; arena sums normal, uniform, half_normal"),
    ],
)
def test_a_magnitude_or_running_sum_no_distribution_matches_is_refused(source: str, reason: str) -> None:
    draw = find_draw("x", ast.parse(source, mode="eval").body)
    with pytest.raises(NotImportable, match=reason.replace("(", r"\(").replace(")", r"\)")):
        distribution(draw, "x", lambda node: ast.literal_eval(node))


ARANGE_ROWS = "torch.arange(rows, device=device)"
ARANGE_COLS = "torch.arange(cols, device=device)"


@pytest.mark.parametrize(
    "mask, declared",
    [
        (  # a lower triangle of x's two axes, the aranges inline, the mask bare
            f"mask = {ARANGE_ROWS}[:, None] >= {ARANGE_COLS}[None, :]\n            x = x * mask",
            "{'kind': 'tril', 'base': 'normal', 'rows': 0, 'cols': 1}",
        ),
        (  # blocks of rows x rows along cols, strictly lower, through names; the mask placed by slices
            f"i = {ARANGE_COLS} % rows\n            j = {ARANGE_ROWS}\n"
            "            mask = j[:, None] < i[None, :]\n            x = mask[:, :] * x",
            "{'kind': 'tril', 'base': 'normal', 'rows': 1, 'cols': 0, 'diagonal': -1}",
        ),
    ],
)
def test_a_draw_masked_to_a_triangle_is_a_tril(checkout: Path, mask: str, declared: str) -> None:
    build = _files_after(checkout, DRAW_X, f"{DRAW_X}\n            {mask}")["BUILD"].decode()
    assert f"{{'name': 'x', 'shape': ['rows', 'cols'], 'dtype': 'float16', 'dist': {declared}}}" in build


@pytest.mark.parametrize(
    "mask, reason",
    [
        (
            f"mask = ({ARANGE_COLS} % 4)[None, :] > {ARANGE_ROWS}[:, None]",
            "its mask's `4` is not the size of its axis 0 in case 2",
        ),
        (
            f"mask = ({ARANGE_ROWS} % cols)[:, None] <= {ARANGE_COLS}[None, :]",
            "keeps values above a diagonal of its blocks",
        ),
        (f"mask = {ARANGE_COLS}[None, :] >= {ARANGE_ROWS}[:, None]", "its mask's rows outnumber its columns"),
        ("mask = torch.ones(rows, cols, device=device) > 0", "which is not one comparison of two aranges"),
    ],
)
def test_a_mask_that_is_no_tril_of_the_draw_says_why(checkout: Path, mask: str, reason: str) -> None:
    assert reason in _reason_after(checkout, DRAW_X, f"{DRAW_X}\n            {mask}\n            x = x * mask")

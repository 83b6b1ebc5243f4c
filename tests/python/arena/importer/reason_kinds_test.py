"""Each triton2triton reason's kind (outcome.py: the stage and rule of the reading that refused the
task, raised as a subclass of NotImportable): the fixture's fake_scale runner with one change, read
by read_task; the unchanged fake_add, fake_fill and a fake_scale arena's loader refuses through
import_checkout; and the report's group lines with their counts."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest

from arena.importer import hip_layout, outcome
from arena.importer.importer import import_checkout
from arena.importer.outcome import NotImportable
from arena.importer.report import format_table, report_document
from arena_testing.aka_refusal import refused

RUNNER = Path("tasks/triton2triton/vllm/fake_scale/scripts/task_runner.py")
DRAW_X = "x = torch.randn(rows, cols, device=device, dtype=dtype)"
DRAW_W = "w = torch.rand(cols, device=device, dtype=torch.float32) * 2 + 0.5"
CALL = "result = mod.scale_rows(x, w, alpha=ALPHA)"
COMPARE = "torch.allclose(result, ref, atol=1e-2, rtol=1e-3)"
ADD = "triton2triton/rocmbench/fake_add"
FILL = "triton2triton/vllm/fake_fill"


def _refused(checkout: Path, changes: list[tuple[str, str]]) -> NotImportable:
    runner = checkout / RUNNER
    text = runner.read_text()
    assert all(old in text for old, _ in changes)
    runner.write_text(functools.reduce(lambda text, change: text.replace(*change), changes, text))
    return refused(checkout, "triton2triton/vllm/fake_scale")


@pytest.mark.parametrize(
    "changes, kind, reason",
    [
        ([("def run_correctness():", "def run_check():")], outcome.LayoutNotRead, "defines no run_correctness()"),
        ([("TEST_SHAPES = [", "SEEDS = [")], outcome.CasesByCode, "has no TEST_SHAPES list"),
        ([(CALL, f"{CALL[:-1]}).float()")], outcome.KernelCallNotRead, "uses the kernel's output inside an expression"),
        ([(COMPARE, COMPARE.replace("result, ref", "result[:2], ref[:2]"))], outcome.PartialCheck, "does not compare"),
        ([(DRAW_W, f"{DRAW_W}\n            w = w / w.sum()")], outcome.NotDrawn, "which no arena distribution matches"),
        (
            [(DRAW_X, DRAW_X.replace("dtype=dtype", "dtype=getattr(torch, 'float16')"))],
            outcome.NotFollowed,
            "input 'x' cannot be read",
        ),
        ([("dtype = torch.float16", "dtype = torch.uint32")], outcome.NotHeld, "which is not an arena dtype"),
        (
            [
                ("dtype = torch.float16", "dtype = torch.int32"),
                (DRAW_X, "x = torch.randint(0, 5, (rows, cols), device=device, dtype=dtype)"),
            ],
            outcome.ToleranceNotHeld,
            "arena checks integer outputs exactly",
        ),
        (
            [("ref = reference_scale(x, w, ALPHA)", "ref = reference_scale(x, w, ALPHA) + torch.randn(1)")],
            outcome.ReferenceNotWritten,
            "draws random values for the reference",
        ),
        (
            [("torch.cuda.synchronize()", "result.sum().backward()")],
            outcome.GradientCheck,
            "arena checks a kernel's outputs, not gradients",
        ),
    ],
)
def test_each_reason_is_raised_with_its_stage_s_kind(
    checkout: Path, changes: list[tuple[str, str]], kind: type[NotImportable], reason: str
) -> None:
    refused = _refused(checkout, changes)
    assert reason in str(refused)
    assert type(refused) is kind and refused.kind == kind.KIND


def test_a_kind_given_by_name_overrides_the_class_s() -> None:
    assert NotImportable("why").kind == ""
    assert outcome.NotDrawn("why").kind == "an input no arena distribution draws"
    assert NotImportable("why", hip_layout.PROGRAM).kind == hip_layout.PROGRAM


def test_the_report_groups_the_triton2triton_reasons_by_kind_with_their_counts(checkout: Path, tmp_path: Path) -> None:
    tasks = checkout / "tasks" / "triton2triton" / "vllm"
    shutil.copytree(tasks / "fake_scale", tasks / "fake:scale")  # arena's loader refuses the name
    kernel = tasks / "fake_fill" / "source" / "fake_fill.py"  # a view of the written argument returned
    kernel.write_text(kernel.read_text().replace("    out.copy_(x)", "    out.copy_(x)\n    return out[:]"))
    runner = tasks / "fake_fill" / "scripts" / "task_runner.py"
    runner.write_text(
        runner.read_text().replace("        mod.fill_rows(out, x)", "        result = mod.fill_rows(out, x)")
    )
    runner.write_text(runner.read_text().replace("torch.equal(out, ref)", "torch.equal(result.cpu(), ref)"))
    out = tmp_path / "out"
    outcomes = import_checkout(checkout, out)
    document = report_document(outcomes, checkout, out)
    kinds = {o["source"]: o["kind"] for o in document["outcomes"] if not o["imported"]}
    assert {source: kind for source, kind in kinds.items() if source.startswith("triton2triton/")} == {
        ADD: outcome.LaunchNotWritten.KIND,
        FILL: outcome.StoredAnswer.KIND,
        "triton2triton/vllm/fake:scale": outcome.LoaderRefused.KIND,
    }
    assert "" not in document["not_imported_by_kind"]
    lines = format_table(outcomes).splitlines()
    start = lines.index("not imported, by reason:")
    assert lines[start + 1 :] == [
        f"    1  {hip_layout.UNREAD}",  # largest first, then by name
        f"    1  {hip_layout.EXTENSION}",
        f"    1  {outcome.LoaderRefused.KIND}",
        f"    1  {outcome.LaunchNotWritten.KIND}",
        f"    1  {hip_layout.BOUND}",
        f"    1  {hip_layout.PROGRAM}",
        f"    1  {hip_layout.NO_BASELINE}",
        f"    1  {outcome.StoredAnswer.KIND}",
        "13 task(s): 5 imported, 8 not imported",
    ]

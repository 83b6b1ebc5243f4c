"""Tier `child`: the imported fixture tasks through `arena validate-task` and the real harness (on
CPU here): the reference passes arena's float64 check and the copied kernel evaluates correct."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main as cli
from arena.importer.importer import import_checkout


def _validates(out: Path, name: str, capsys: pytest.CaptureFixture[str], family: str = "vllm") -> None:
    task = f"tasks/triton2triton/{family}/{name}"
    assert cli.main(["--repo-root", str(out), "validate-task", "--task", task, "--backend", "cpu"]) == 0
    printed = capsys.readouterr().out
    assert "ok    reference agrees with float64 on case 'shape1'" in printed
    assert "ok    baseline evaluates correct" in printed
    assert f"{task}:{name}: valid" in printed


def test_the_imported_task_validates(checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    import_checkout(checkout, out)
    _validates(out, "fake_scale", capsys)


def test_the_imported_task_whose_kernel_returns_two_tensors_validates(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """(q int8, scales float32): the harness checks both outputs of the baseline against the
    reference's tuple, q exactly and scales within the float32 tolerance."""
    out = tmp_path / "out"
    import_checkout(checkout, out)
    _validates(out, "fake_quant", capsys)


def test_the_imported_task_whose_kernel_writes_its_argument_validates(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`out`, written in place: the harness hands the kernel and the reference a fresh copy each
    and compares what they leave in it."""
    out = tmp_path / "out"
    import_checkout(checkout, out)
    _validates(out, "fake_fill", capsys)


def test_the_imported_task_whose_kernel_writes_its_argument_and_returns_it_validates(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same kernel returning `out` as well, as AKA's wrappers do: its return declared ignored,
    the harness compares what it leaves in `out` and nothing else."""
    kernel = checkout / "tasks" / "triton2triton" / "vllm" / "fake_fill" / "source" / "fake_fill.py"
    kernel.write_text(kernel.read_text().replace("    out.copy_(x)", "    out.copy_(x)\n    return out"))
    out = tmp_path / "out"
    import_checkout(checkout, out)
    _validates(out, "fake_fill", capsys)


def test_the_imported_harness_task_validates(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The geak_eval layout: a task read from test_kernel_harness.py, two outputs."""
    out = tmp_path / "out"
    import_checkout(checkout, out)
    _validates(out, "fake_append", capsys, family="geak_eval/L1")

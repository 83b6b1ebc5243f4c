"""A kernel file that sets launch options only Triton's AMD backend knows, and never asks which
backend runs it, is imported as a task for AMD GPUs only (arena.importer.amd_options)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from arena.importer.amd_options import amd_only_options
from arena.importer.importer import import_checkout
from arena.importer.report import format_table
from arena.task.load import load_task

CONFIGS = """
import triton

def configs():
    return [triton.Config({"BLOCK": 64, "waves_per_eu": 0, "matrix_instr_nonkdim": 16, "kpack": k}, num_warps=4)
            for k in (1, 2)]

def check(a):
    assert a.is_cuda  # a tensor's device: ROCm's torch says True too
"""
CHOSEN = """
import triton

def is_hip():
    return triton.runtime.driver.active.get_current_target().backend == "hip"

def configs():
    if is_hip():
        return [triton.Config({"waves_per_eu": 1}, num_warps=4)]
    return [triton.Config({}, num_warps=4)]
"""


def _options(source: str) -> list[str]:
    return amd_only_options(ast.parse(textwrap.dedent(source)))


def test_options_set_unconditionally_make_an_amd_task():
    assert _options(CONFIGS) == ["kpack", "matrix_instr_nonkdim", "waves_per_eu"]
    assert _options("kernel[grid](x, y, BLOCK=64, waves_per_eu=2)\n") == ["waves_per_eu"]


@pytest.mark.parametrize(
    "asks",
    [
        CHOSEN,
        CONFIGS + "\nimport torch\nHIP = torch.version.hip is not None\n",
        CONFIGS + "\nTARGET = triton.runtime.driver.active.get_current_target()\n",
    ],
)
def test_a_file_that_chooses_by_backend_is_left_for_both(asks):
    assert _options(asks) == []


def test_a_file_without_them_is_left_for_both():
    assert _options("import triton\nCONFIGS = [triton.Config({'BLOCK': 64}, num_warps=4)]\n") == []


def test_the_import_declares_gfx942_alone_for_such_a_task(checkout: Path, tmp_path: Path) -> None:
    kernel = checkout / "tasks/triton2triton/rocmbench/fake_softmax/fake_softmax.py"
    text = kernel.read_text()
    launch = "BLOCK=triton.next_power_of_2(x.shape[1]))"
    assert launch in text
    address = "tasks/triton2triton/rocmbench/fake_softmax:fake_softmax"
    import_checkout(checkout, tmp_path / "before")
    assert load_task(tmp_path / "before", address).archs == ("sm_90", "gfx942")
    kernel.write_text(text.replace(launch, "BLOCK=triton.next_power_of_2(x.shape[1]), waves_per_eu=2)"))
    outcomes = import_checkout(checkout, tmp_path / "after")
    assert load_task(tmp_path / "after", address).archs == ("gfx942",)
    # The report names it, and its record says it.
    source = "triton2triton/rocmbench/fake_softmax"
    assert f"1 declared for gfx942 alone (their launch options): {source}" in format_table(outcomes)
    assert next(o for o in outcomes if o.source == source).to_dict()["archs"] == ["gfx942"]

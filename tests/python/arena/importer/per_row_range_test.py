"""A range per row, filled by a loop (vllm `triton_bad_words`' `offsets[b, j] = j`,
`triton_compute_slot_mappings`' `positions[start + k] = k` from `start = query_start_loc[r].item()`,
`triton_prepare_eagle_inputs`' `start = r * tokens_per_req`): an arange with a period, the dim of
the row's length. The fixture's fake_scale task is copied as fake_rows, its runner filling both."""

from __future__ import annotations

import shutil
from pathlib import Path

import torch

from arena.harness.inputs import make_inputs
from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena_testing.aka_runner import runner_text
from arena_testing.modules import load_module

TASK = "triton2triton/vllm/fake_rows"
ADDRESS = f"tasks/{TASK}:fake_rows"
SHAPES = [(4, 8, 3), (8, 16, 5), (16, 32, 2)]

KERNEL = '''"""A fake kernel file: x plus each row's offsets summed plus its positions."""
import torch


def add_rows(x: torch.Tensor, offsets: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    return x + offsets.sum(1, keepdim=True).float() + positions.view(x.shape[0], -1).float()
'''

RUNNER = runner_text(
    "fake_rows",
    """
def reference_rows(x, offsets, positions):
    return x + offsets.sum(1, keepdim=True).float() + positions.view(x.shape[0], -1).float()


def run_correctness():
    import torch
    mod = load_module()
    device = "cuda"
    for i, (rows, q, width) in enumerate(TEST_SHAPES):
        torch.manual_seed(42 + i)
        x = torch.randn(rows, q, device=device)
OFFSETS
        query_start_loc = torch.zeros(rows + 1, dtype=torch.int32, device=device)
        for r in range(rows):
            query_start_loc[r + 1] = query_start_loc[r] + q
        total = rows * q
        positions = torch.zeros(total, dtype=torch.int64, device=device)
        for r in range(rows):
            START
            for k in range(q):
                positions[start + k] = k
        result = mod.add_rows(x, offsets, positions)
        torch.cuda.synchronize()
        ref = reference_rows(x, offsets, positions)
        if not torch.allclose(result, ref, atol=1e-5, rtol=1e-5):
            return False, f"Shape {i + 1}: mismatch"
    return True, None
""",
)


OFFSETS = """        offsets = torch.zeros(rows, width + 1, dtype=torch.int32, device=device)
        for b in range(rows):
            for j in range(width + 1):
                offsets[b, j] = j"""
# vllm `triton_decode_attn_stage1`'s block table: row b's positions, `page` to a page, pages numbered on
PAGES = """        pages = width + 1
        padded = pages * 2
        offsets = torch.zeros(rows, padded, dtype=torch.int32, device=device)
        for b in range(rows):
            for pos in range(padded):
                page_idx = b * pages + pos // 2
                offsets[b, pos] = page_idx"""


def _rows_task(checkout: Path, start: str, offsets: str = OFFSETS) -> None:
    folder = checkout / "tasks" / TASK
    shutil.copytree(checkout / "tasks" / "triton2triton" / "vllm" / "fake_scale", folder)
    (folder / "source" / "fake_scale.py").unlink()
    (folder / "source" / "fake_rows.py").write_text(KERNEL)
    (folder / "scripts" / "task_runner.py").write_text(
        RUNNER.replace("SHAPES_HERE", repr(SHAPES)).replace("START", start).replace("OFFSETS", offsets)
    )
    config = folder / "config.yaml"
    config.write_text(config.read_text().replace("fake_scale", "fake_rows").replace("scale_rows", "add_rows"))


def _filled(rows: int, q: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The test's own loops, run."""
    offsets = torch.zeros(rows, width + 1, dtype=torch.int32)
    for b in range(rows):
        for j in range(width + 1):
            offsets[b, j] = j
    positions = torch.zeros(rows * q, dtype=torch.int64)
    for r in range(rows):
        for k in range(q):
            positions[r * q + k] = k
    return offsets, positions


def _imports_exactly(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[TASK].address == ADDRESS, outcomes[TASK].reason
    task = load_task(out, ADDRESS)
    x, offsets, positions = task.inputs
    assert offsets.dist.kind == positions.dist.kind == "arange"
    assert offsets.dist.params == {"period": offsets.shape[1]} and positions.dist.params == {"period": "q"}
    reference = load_module(out / "tasks" / TASK / "reference.py")
    for case, shape in zip(task.cases, SHAPES):
        drawn = make_inputs(task, case, torch.device("cpu"))
        want = _filled(*shape)
        assert torch.equal(drawn[1], want[0]) and torch.equal(drawn[2], want[1])
        got = reference.reference(*drawn)
        assert torch.equal(got, drawn[0] + want[0].sum(1, keepdim=True).float() + want[1].view(shape[0], -1).float())


def test_a_range_per_row_from_a_running_sum_is_an_arange_with_a_period(checkout: Path, tmp_path: Path) -> None:
    _rows_task(checkout, "start = query_start_loc[r].item()")
    _imports_exactly(checkout, tmp_path)


def test_a_range_per_row_from_r_times_q_is_an_arange_with_a_period(checkout: Path, tmp_path: Path) -> None:
    _rows_task(checkout, "start = r * q")
    _imports_exactly(checkout, tmp_path)


def test_a_block_table_of_pages_is_an_arange_with_a_divisor(checkout: Path, tmp_path: Path) -> None:
    _rows_task(checkout, "start = r * q", PAGES)
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[TASK].address == ADDRESS, outcomes[TASK].reason
    task = load_task(out, ADDRESS)
    offsets = task.inputs[1]
    assert offsets.dtype == "int32" and offsets.dist.kind == "arange" and set(offsets.dist.params) == {"divisor"}
    for case, (rows, _, width) in zip(task.cases, SHAPES):
        pages = width + 1
        want = torch.zeros(rows, pages * 2, dtype=torch.int32)
        for b in range(rows):
            for pos in range(pages * 2):
                want[b, pos] = b * pages + pos // 2
        assert torch.equal(make_inputs(task, case, torch.device("cpu"))[1], want)


def test_a_block_table_with_positions_past_the_loop_is_refused(checkout: Path, tmp_path: Path) -> None:
    """The loop fills `range(padded - 1)`: each row's last element stays 0, which no arange draws."""
    _rows_task(checkout, "start = r * q", PAGES.replace("range(padded)", "range(padded - 1)"))
    outcomes = {o.source: o for o in import_checkout(checkout, tmp_path / "out")}
    assert not outcomes[TASK].address and "cannot reshape" in outcomes[TASK].reason, outcomes[TASK].reason


def test_a_row_start_that_is_not_r_times_the_row_length_is_refused(checkout: Path, tmp_path: Path) -> None:
    _rows_task(checkout, "start = r * width")
    outcomes = {o.source: o for o in import_checkout(checkout, tmp_path / "out")}
    assert outcomes[TASK].reason.startswith("input 'positions' is written by line"), outcomes[TASK].reason

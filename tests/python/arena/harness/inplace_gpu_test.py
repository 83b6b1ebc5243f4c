"""Outputs written in place on a real GPU: the timed chunks hand the written cache over like any
output, HIP launchers write it through the input's pointer, and a cache written one slot off is
caught in the checked calls. Skipped where torch sees no GPU (tests/gpu/run.sh runs it there)."""

from __future__ import annotations

import statistics

from arena_testing.gpu import needs_gpu
from arena_testing.harness_tasks import HIP_SCATTER, TRITON_SCATTER, build_scatter_task

pytestmark = needs_gpu


def _main(result):  # type: ignore[no-untyped-def]
    return next(c for c in result.cases if c.name == "main")


def test_a_triton_cache_write_is_timed_and_its_no_op_reads_one(run_candidate, tmp_path):
    task = build_scatter_task(tmp_path, tokens=1 << 14)  # 16384 rows of 64 float32 into 65536 slots
    result = run_candidate(TRITON_SCATTER, task=task, backend="auto", budget_s_per_case=0.3)
    assert result.status == "PASSED", result.errors
    main = _main(result)
    assert result.timings_available and len(main.candidate_us) >= 20
    assert 0.9 < statistics.median(main.baseline_us) / statistics.median(main.candidate_us) < 1.1


def test_a_hip_cache_write_goes_through_the_inputs_pointer(run_candidate, tmp_path):
    task = build_scatter_task(tmp_path, hip=True, tokens=1 << 12)
    result = run_candidate(
        HIP_SCATTER.replace("dim3(32)", "dim3(64)"), task=task, backend="auto", budget_s_per_case=0.3
    )
    assert result.status == "PASSED", result.errors
    assert result.timings_available


def test_a_hip_cache_written_one_slot_off_is_incorrect(run_candidate, tmp_path):
    task = build_scatter_task(tmp_path, hip=True, tokens=1 << 12)
    wrong = HIP_SCATTER.replace("cache[slots[t] * D + d]", "cache[((slots[t] + 1) % 50) * D + d]")
    assert wrong != HIP_SCATTER
    result = run_candidate(wrong, task=task, backend="auto")
    assert result.status == "INCORRECT"
    assert any("output cache" in c.error for c in result.cases if c.error), result.errors

# Attack 8: run the work on a side stream the harness's events do not cover.
# Static: torch.cuda.Stream/stream/set_stream are forbidden (forbidden_test.py). At run time (GPU
# only), for names built so the static check cannot see them: the judge compares the outputs as
# they are at the worker's `done` (unjoined work leaves poison), the chunk clock bounds the samples,
# and one call under the profiler must start all its GPU work on the harness's stream
# (docs/harness.md, cheat 8).
# Expected verdict: CHEAT_DETECTED.

import pytest

from arena_testing.gpu import needs_gpu
from arena_testing.harness_tasks import build_task


@needs_gpu
@pytest.mark.parametrize("n", [3000, 1 << 24])  # a kernel of ~2 us (the late output is rarely seen), ~40 us
def test_side_stream_is_caught_at_run_time(run_candidate, tmp_path, n):
    # The exact sum, on a side stream: the events see none of it, so it measures faster.
    result = run_candidate(
        """
        import torch
        import triton
        import triton.language as tl

        cuda = getattr(torch, "cu" + "da")
        side = getattr(cuda, "Str" + "eam")()


        @triton.jit
        def _k(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
            o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = o < n
            tl.store(z_ptr + o, tl.load(x_ptr + o, mask=m) + tl.load(y_ptr + o, mask=m), mask=m)


        def add(x, y):
            z = torch.empty_like(x)
            side.wait_stream(getattr(cuda, "current_" + "stream")())
            with getattr(cuda, "str" + "eam")(side):
                _k[(triton.cdiv(x.numel(), 1024),)](x, y, z, x.numel(), BLOCK=1024)
            return z
    """,
        backend="cuda",
        task=build_task(tmp_path, n=n),
        budget_s_per_case=0.3,
    )
    # The judge may already see the late output (INCORRECT: on a GPU a checked call's slot is
    # copied behind the call on the harness's stream, as a timed call's is); if not, the profiler must.
    errors = " ".join(result.errors)
    caught_by_profiler = result.status == "CHEAT_DETECTED" and "off the harness's stream" in errors
    caught_by_validator = result.status == "INCORRECT" and ("timed call" in errors or "elements differ" in errors)
    assert caught_by_profiler or caught_by_validator, (result.status, result.errors)

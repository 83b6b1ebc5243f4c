# Attack 15: compute in a lower precision (fp16 for a float32 task) and hope loose tolerances pass.
# float32 is checked at atol = rtol = 1e-5.
# Expected verdict: INCORRECT.

from arena_testing.harness_tasks import TRITON_ADD


def test_fp16_arithmetic_fails_fp32_tolerance(run_candidate):
    source = TRITON_ADD.replace(
        "tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)",
        "(tl.load(x_ptr + offsets, mask=mask).to(tl.float16) + tl.load(y_ptr + offsets, mask=mask).to(tl.float16)).to(tl.float32)",
    )
    assert source != TRITON_ADD
    result = run_candidate(source)
    assert result.status == "INCORRECT"
    assert "atol 1e-05" in result.cases[0].error

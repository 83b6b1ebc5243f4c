# Control: a wrong Triton candidate (computes x - y).
# Expected verdict: INCORRECT, naming the output, the first index, got and want.

from arena_testing.harness_tasks import TRITON_ADD


def test_wrong_candidate_is_incorrect(run_candidate):
    result = run_candidate(TRITON_ADD.replace("mask=mask) + tl.load", "mask=mask) - tl.load"))
    assert result.status == "INCORRECT"
    assert result.compiled and not result.correct
    assert "output z" in result.cases[0].error and "first at [" in result.cases[0].error

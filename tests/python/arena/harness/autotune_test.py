"""An autotuned Triton candidate (many configs) passes on the CPU interpreter like any other."""

from arena_testing.harness_tasks import AUTOTUNED_ADD


def test_an_autotuned_candidate_passes_on_the_interpreter(run_candidate):
    result = run_candidate(AUTOTUNED_ADD)
    assert result.status == "PASSED", result.errors


def test_a_wrong_config_among_many_is_still_caught(run_candidate):
    # Every config runs once while tuning; the kept one must still give the right answer.
    wrong = AUTOTUNED_ADD.replace(
        "tl.load(y_ptr + offsets, mask=mask), mask=mask)", "tl.load(x_ptr + offsets, mask=mask), mask=mask)"
    )
    assert run_candidate(wrong).status == "INCORRECT"

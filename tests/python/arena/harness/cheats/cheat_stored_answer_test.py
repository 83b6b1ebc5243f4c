# Attack 6, the variant that beat per-call checks on the H200: fingerprint a few input elements,
# compute each answer once, and hand the stored tensor back whenever the same inputs come again
# (all correct, nothing computed). Defence: every output must be new memory, not an input's
# storage and not the storage of an output an earlier call returned (the harness holds those).
# Expected verdict: INCORRECT, saying the output is a stored answer.

from arena_testing.harness_tasks import STORED_ADD as STORED
from arena_testing.harness_tasks import TRITON_ADD

ALIASED = TRITON_ADD.replace("z = torch.empty_like(x)", "z = x.view_as(x)")


def test_a_stored_answer_handed_back_is_caught(run_candidate):
    assert "_answers[key]" in STORED  # the planted cache is in the candidate
    result = run_candidate(STORED)
    assert result.status == "INCORRECT", result.errors
    assert any("an earlier call's output, returned again" in c.error for c in result.cases), result.cases


def test_an_output_that_is_an_input_is_caught(run_candidate):
    # The sum written over x's own memory: the values are right, the input is gone.
    result = run_candidate(ALIASED)
    assert result.status == "INCORRECT", result.errors
    assert any("its storage is input 0's" in c.error for c in result.cases), result.cases

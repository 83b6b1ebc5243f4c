# Attack 5: modify or zero the inputs so a reference computed afterwards would agree.
# References come from pristine copies made before the candidate exists; inputs are compared
# bitwise with those copies after every checked call.
# Expected verdict: INCORRECT.

from arena_testing.harness_tasks import TRITON_ADD


def test_zeroed_inputs(run_candidate):
    result = run_candidate(
        "import torch\n\ndef add(x, y):\n    x.zero_()\n    y.zero_()\n    return torch.zeros_like(x)\n"
    )
    assert result.status == "INCORRECT"


def test_correct_output_but_inputs_changed(run_candidate):
    source = TRITON_ADD.replace("    return z", "    y.fill_(0.0)\n    return z")
    result = run_candidate(source)
    assert result.status == "INCORRECT"
    assert "input y was modified" in result.cases[0].error

# Attack 1: call the library op instead of writing a kernel (torch.add here, which the task forbids),
# directly (caught by the static check) or through a string-built name / an operator (caught at
# run time: the torch functions and Tensor methods a checked call runs are matched against the
# forbidden list).
# Expected verdict: CHEAT_DETECTED.


def test_direct_call_is_caught_statically(run_candidate):
    result = run_candidate("import torch\n\ndef add(x, y):\n    return torch.add(x, y)\n")
    assert result.status == "CHEAT_DETECTED"
    assert "torch.add" in result.errors[0]


def test_operator_is_caught_at_run_time(run_candidate):
    result = run_candidate("def add(x, y):\n    return x + y\n")
    assert result.status == "CHEAT_DETECTED"
    assert "forbidden torch function" in result.errors[0]

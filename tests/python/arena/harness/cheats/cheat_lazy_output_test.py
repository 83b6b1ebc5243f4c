# Attack 10: return a tensor subclass (a lazy proxy) whose work would run in the checker.
# Outputs must be exactly torch.Tensor, contiguous, with the reference's dtype, shape, device.
# Expected verdict: INCORRECT.

from arena_testing.harness_tasks import TRITON_ADD


def test_subclass_is_rejected(run_candidate):
    source = TRITON_ADD.replace(
        "def add(x, y):\n", "class Lazy(torch.Tensor):\n    pass\n\n\ndef add(x, y):\n"
    ).replace("    return z", "    return z.as_subclass(Lazy)")
    result = run_candidate(source)
    assert result.status == "INCORRECT"
    assert "plain torch.Tensor" in result.cases[0].error


def test_non_contiguous_output_is_rejected(run_candidate):
    source = TRITON_ADD.replace("    return z", "    return torch.stack([z, z], 1)[:, 0]")
    result = run_candidate(source)
    assert result.status == "INCORRECT"
    assert "contiguous" in result.cases[0].error

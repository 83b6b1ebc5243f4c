# Attack 20: read or return uninitialised memory (skip part of the output; garbage that is
# sometimes right). Allocator blocks are poisoned before each checked call and HIP outputs are
# poisoned by the harness; the candidate is called twice on the same inputs and must agree bitwise.
# Expected verdict: INCORRECT.

from arena_testing.harness_tasks import TRITON_ADD


def test_half_the_output_left_unwritten(run_candidate):
    result = run_candidate(TRITON_ADD.replace("x.numel(), BLOCK=1024)", "x.numel() // 2, BLOCK=1024)"))
    assert result.status == "INCORRECT"


def test_nondeterministic_within_tolerance(run_candidate):
    source = TRITON_ADD.replace(
        "    return z",
        "    return torch.addcmul(z, torch.rand(z.shape, dtype=z.dtype, device=z.device), torch.full_like(z, 1e-6))",
    )
    result = run_candidate(source)
    assert result.status == "INCORRECT"
    assert "not deterministic" in " ".join(c.error for c in result.cases)

"""An autotuned Triton candidate (many configs) passes on the CPU interpreter like any other."""

AUTOTUNED_ADD = """
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256, 512) for w in (1, 2, 4)],
    key=["n"],
)
@triton.jit
def _add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x, y):
    z = torch.empty_like(x)
    n = x.numel()
    _add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, z, n)
    return z
"""


def test_an_autotuned_candidate_passes_on_the_interpreter(run_candidate):
    result = run_candidate(AUTOTUNED_ADD)
    assert result.status == "PASSED", result.errors


def test_a_wrong_config_among_many_is_still_caught(run_candidate):
    # Every config runs once while tuning; the kept one must still give the right answer.
    wrong = AUTOTUNED_ADD.replace("tl.load(y_ptr + offsets, mask=mask), mask=mask)", "tl.load(x_ptr + offsets, mask=mask), mask=mask)")
    assert run_candidate(wrong).status == "INCORRECT"

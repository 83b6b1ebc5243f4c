# Attack 19: behave differently on the first calls (correct while the harness is "warming up" or
# checking, then fast and wrong). Warm-up is the timed procedure itself, every checked and every
# timed call is validated, and on a GPU each timed call is compared with its reference.
# Expected verdict: INCORRECT.


from arena_testing.gpu import needs_gpu
from arena_testing.harness_tasks import TRITON_ADD


def _wrong_after(calls: int) -> str:
    return TRITON_ADD.replace("def add(x, y):\n", "_calls = [0]\n\n\ndef add(x, y):\n    _calls[0] += 1\n").replace(
        "    return z", f"    return z if _calls[0] <= {calls} else z * 0"
    )


def test_wrong_after_the_first_calls(run_candidate):
    result = run_candidate(_wrong_after(2))
    assert result.status == "INCORRECT"


@needs_gpu
def test_wrong_only_in_the_timed_loop(run_candidate):
    result = run_candidate(_wrong_after(40), backend="cuda")
    assert result.status == "INCORRECT"
    assert "timed call" in " ".join(result.errors)

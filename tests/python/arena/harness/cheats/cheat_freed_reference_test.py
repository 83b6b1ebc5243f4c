# Attack 4: return uninitialised memory hoping the allocator hands back a freed reference output.
# References stay alive for the whole run and blocks of the output's size are filled with poison
# and freed just before each checked call.
# Expected verdict: INCORRECT.


def test_empty_like_is_not_the_reference(run_candidate):
    result = run_candidate("import torch\n\ndef add(x, y):\n    return torch.empty_like(x)\n")
    assert result.status == "INCORRECT"

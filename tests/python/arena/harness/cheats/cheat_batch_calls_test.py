# Attack 7: do the work once and make later calls no-ops returning the earlier result.
# Each call is checked against the reference of its own inputs (and on a GPU each timed call is
# validated right after its end event), so a stale result fails.
# Expected verdict: INCORRECT.

from arena_testing.harness_tasks import TRITON_ADD


def test_first_call_only(run_candidate):
    source = TRITON_ADD.replace(
        "def add(x, y):\n", "_done = []\n\n\ndef add(x, y):\n    if _done:\n        return _done[0].clone()\n"
    ).replace("    return z", "    _done.append(z.clone())\n    return z")
    result = run_candidate(source)
    assert result.status == "INCORRECT"
